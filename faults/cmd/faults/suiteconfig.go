package main

import (
	"flag"
	"fmt"
	"strings"
	"time"

	"github.com/leasehold-go/leasehold/faults/harness"
)

// task is one run of the suite.
type task struct {
	store    string
	seed     uint64
	mutation bool
	stall    bool // W7, fence.Middleware under stalled writers
	unsafe   bool // W7's negative control (UnsafeConcurrent)
}

// suiteConfig is the suite's command line, with the mode's defaults
// applied.
type suiteConfig struct {
	mode      string // "short" or "long"
	stores    string // as given, for the log
	names     []string
	nRuns     int
	secs      int
	ttl       time.Duration
	mutStores string
	w7        int
	seed      uint64
	cliNames  []string
	primNames []string // stores that get W8 and W9
	primSecs  int      // their fault schedule, seconds (0: one pass)
	primsOnly bool     // run only W8 and W9 (and their mutation runs)
	lhBin     string
	out       string
	jsonOut   string
	parallel  int
	command   string
	wl        workload
	budget    time.Duration // wall time per store (0: none)
}

// modeDefaults returns the short or the long mode's configuration. The
// long one is sized for about an hour of wall time with every store at
// once on a 2-core machine: each store's runs continue while its budget
// lasts, and the denser workload aims at LongTarget fenced writes per
// store in that time (faults/README.md has the rates measured).
func modeDefaults(long bool, stores string) suiteConfig {
	if !long {
		// Two stores at a time: a short run mostly waits out its faults
		// (load 0.1-2.5 one at a time), and CI's suite has a time budget.
		return suiteConfig{mode: "short", stores: stores, nRuns: 1, ttl: 750 * time.Millisecond, mutStores: "sqlite", w7: 10,
			parallel: 2, wl: shortWorkload()}
	}
	return suiteConfig{mode: "long", stores: stores, nRuns: 30, secs: 300, ttl: time.Second, mutStores: stores, w7: 60,
		parallel: len(strings.Split(stores, ",")), budget: 55 * time.Minute, wl: longWorkload()}
}

// parseSuite reads the suite's flags.
func parseSuite(args []string) (suiteConfig, error) {
	fs := flag.NewFlagSet("suite", flag.ExitOnError)
	short := fs.Bool("short", false, "CI mode: one pass of every fault class per store, and the mutation run")
	long := fs.Bool("long", false, "long mode: every store at once, each a mutation run then runs of 300 s while its -budget lasts (at most -runs)")
	stores := fs.String("stores", strings.Join(harness.SuiteNames(), ","), "stores to run (azblob only when named: see harness.SuiteNames)")
	runs := fs.Int("runs", 0, "runs per store (default: 1 short, 30 long; fewer when the -budget runs out)")
	budget := fs.Duration("budget", -1, "wall time per store: its next run starts only if its longest run so far still fits (default: none short, 55m long; 0: none)")
	seconds := fs.Int("seconds", -1, "seconds per run (default: one pass short, 300 long)")
	seed := fs.Uint64("seed", 0, "first seed (default: from the clock); run i uses seed+i")
	ttl := fs.Duration("ttl", 0, "lease TTL (default 750ms short, 1s long; a store's MinTTL wins)")
	out := fs.String("out", "", "write the safety table (markdown) here")
	jsonOut := fs.String("json", "", "append every run's result here as it completes (JSON lines; faults report renders them)")
	parallel := fs.Int("parallel", 0, "stores run at the same time (default: 2 short, every store long)")
	mutations := fs.String("mutation-stores", "", "stores that get a mutation run (default: sqlite short, all long)")
	command := fs.String("command", "", "the command line to print in the table (default: this one)")
	stallSecs := fs.Int("stall-seconds", 0, "seconds of each W7 run (fence.Middleware under stalled writers, default options then UnsafeConcurrent; on sqlite, after its other runs); default 10 short, 60 long, negative: skip W7")
	cliStores := fs.String("cli-stores", "sqlite,redis", "stores that also get a run of the leasehold run (CLI) workload (\"\": none)")
	primStores := fs.String("prim-stores", "sqlite,redis", "stores that also get W8 and W9, the semaphore and read-write lock workloads, and their mutation runs where the store has a mutation run (default: sqlite,redis short, every store long; \"\": none)")
	primSecs := fs.Int("prim-seconds", -1, "seconds of each W8 and W9 fault schedule (default: one pass short, 60 long)")
	primsOnly := fs.Bool("prims-only", false, "run only W8 and W9 and their mutation runs, on the -prim-stores (for their rows on the safety page)")
	lhBin := fs.String("leasehold", "", "the leasehold binary for the CLI workload (default: built from ../cmd)")
	readWorkload := workloadFlags(fs)
	_ = fs.Parse(args)
	if *short == *long {
		return suiteConfig{}, fmt.Errorf("suite: give exactly one of -short and -long")
	}
	c := modeDefaults(*long, *stores)
	c.seed, c.lhBin, c.out, c.jsonOut, c.command = *seed, *lhBin, *out, *jsonOut, *command
	var err error
	if c.wl, err = readWorkload(c.wl); err != nil {
		return c, err
	}
	if *budget >= 0 {
		c.budget = *budget
	}
	if *parallel > 0 {
		c.parallel = *parallel
	}
	if *stallSecs != 0 {
		c.w7 = *stallSecs
	}
	if *runs > 0 {
		c.nRuns = *runs
	}
	if *seconds >= 0 {
		c.secs = *seconds
	}
	if *ttl > 0 {
		c.ttl = *ttl
	}
	if *mutations != "" {
		c.mutStores = *mutations
	}
	if c.seed == 0 {
		c.seed = uint64(time.Now().Unix() % 100000)
	}
	if c.command == "" {
		c.command = "./scripts/faults --" + c.mode
	}
	c.names = strings.Split(*stores, ",")
	for _, n := range c.names {
		if _, err := harness.NewBackend(n); err != nil {
			return c, err
		}
	}
	primSet := false
	fs.Visit(func(f *flag.Flag) { primSet = primSet || f.Name == "prim-stores" })
	c.setPrims(*primStores, primSet, *primSecs)
	c.primsOnly = *primsOnly
	for _, n := range strings.Split(*cliStores, ",") {
		if n = strings.TrimSpace(n); n != "" && containsName(c.names, n) {
			c.cliNames = append(c.cliNames, n)
		}
	}
	return c, nil
}

// plan returns each store's runs: the regular runs, the mutation run, and
// on sqlite the W7 pair.
func (c suiteConfig) plan() map[string][]task {
	perStore := map[string][]task{}
	for _, n := range c.names {
		for i := 0; i < c.nRuns; i++ {
			perStore[n] = append(perStore[n], task{store: n, seed: c.seed + uint64(i)})
		}
		if containsName(strings.Split(c.mutStores, ","), n) {
			perStore[n] = append(perStore[n], task{store: n, seed: c.seed + uint64(c.nRuns), mutation: true})
		}
		if n == "sqlite" && c.w7 > 0 {
			perStore[n] = append(perStore[n], task{store: n, seed: c.seed, stall: true}, task{store: n, seed: c.seed, stall: true, unsafe: true})
		}
	}
	return perStore
}

// setPrims sets the stores that get W8 and W9 (list, or with -long every
// store unless the flag was given) and their schedule's seconds (secs, or
// the mode's default: one pass short, 60 s long).
func (c *suiteConfig) setPrims(list string, given bool, secs int) {
	if c.mode == "long" && !given {
		list = strings.Join(c.names, ",")
	}
	c.primSecs = secs
	if secs < 0 {
		c.primSecs = map[string]int{"short": 0, "long": 60}[c.mode]
	}
	for _, n := range strings.Split(list, ",") {
		if n = strings.TrimSpace(n); n != "" && containsName(c.names, n) {
			c.primNames = append(c.primNames, n)
		}
	}
}
