package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/leasehold-go/leasehold/faults/check"
	"github.com/leasehold-go/leasehold/faults/harness"
	"github.com/leasehold-go/leasehold/faults/report"
)

type task struct {
	store    string
	seed     uint64
	mutation bool
	stall    bool // W7, fence.Middleware under stalled writers
	unsafe   bool // W7's negative control (UnsafeConcurrent)
}

func suiteCmd(ctx context.Context, args []string) (int, error) {
	fs := flag.NewFlagSet("suite", flag.ExitOnError)
	short := fs.Bool("short", false, "CI mode: one pass of every fault class per store, and the mutation run")
	long := fs.Bool("long", false, "long mode: 20 runs x 300 s per store, and one mutation run per store")
	stores := fs.String("stores", strings.Join(harness.BackendNames, ","), "stores to run")
	runs := fs.Int("runs", 0, "runs per store (default: 1 short, 20 long)")
	seconds := fs.Int("seconds", -1, "seconds per run (default: one pass short, 300 long)")
	seed := fs.Uint64("seed", 0, "first seed (default: from the clock); run i uses seed+i")
	ttl := fs.Duration("ttl", 0, "lease TTL (default 750ms short, 1s long; a store's MinTTL wins)")
	out := fs.String("out", "", "write the safety table (markdown) here")
	jsonOut := fs.String("json", "", "append every run's result here as it completes (JSON lines; faults report renders them)")
	parallel := fs.Int("parallel", 1, "stores run at the same time")
	mutations := fs.String("mutation-stores", "", "stores that get a mutation run (default: sqlite short, all long)")
	command := fs.String("command", "", "the command line to print in the table (default: this one)")
	stallSecs := fs.Int("stall-seconds", 0, "seconds of each W7 run (fence.Middleware under stalled writers, default options then UnsafeConcurrent; on sqlite, after its other runs); default 10 short, 60 long, negative: skip W7")
	cliStores := fs.String("cli-stores", "sqlite,redis", "stores that also get a run of the leasehold run (CLI) workload (\"\": none)")
	lhBin := fs.String("leasehold", "", "the leasehold binary for the CLI workload (default: built from ../cmd)")
	_ = fs.Parse(args)
	if *short == *long {
		return 0, fmt.Errorf("suite: give exactly one of -short and -long")
	}
	mode := "short"
	nRuns, secs, t, mutStores, w7 := 1, 0, 750*time.Millisecond, "sqlite", 10
	if *long {
		mode = "long"
		nRuns, secs, t, mutStores, w7 = 20, 300, time.Second, *stores, 60
	}
	if *stallSecs != 0 {
		w7 = *stallSecs
	}
	if *runs > 0 {
		nRuns = *runs
	}
	if *seconds >= 0 {
		secs = *seconds
	}
	if *ttl > 0 {
		t = *ttl
	}
	if *mutations != "" {
		mutStores = *mutations
	}
	if *seed == 0 {
		*seed = uint64(time.Now().Unix() % 100000)
	}
	names := strings.Split(*stores, ",")
	for _, n := range names {
		if _, err := harness.NewBackend(n); err != nil {
			return 0, err
		}
	}
	hc, err := holderCmd()
	if err != nil {
		return 0, err
	}
	var cliNames []string
	for _, n := range strings.Split(*cliStores, ",") {
		if n = strings.TrimSpace(n); n != "" && containsName(names, n) {
			cliNames = append(cliNames, n)
		}
	}
	var lh string
	if len(cliNames) > 0 {
		bin, cleanup, err := leaseholdBinary(*lhBin)
		if err != nil {
			return 0, err
		}
		defer cleanup()
		lh = bin
	}
	root, err := os.MkdirTemp("", "leasehold-faults-")
	if err != nil {
		return 0, err
	}
	_ = os.Chmod(root, 0o755)
	logf("suite (%s): stores %s, %d run(s) x %d s each, TTL %s, seeds from %d, work in %s", mode, *stores, nRuns, secs, t, *seed, root)

	perStore := map[string][]task{}
	for _, n := range names {
		for i := 0; i < nRuns; i++ {
			perStore[n] = append(perStore[n], task{store: n, seed: *seed + uint64(i)})
		}
		if containsName(strings.Split(mutStores, ","), n) {
			perStore[n] = append(perStore[n], task{store: n, seed: *seed + uint64(nRuns), mutation: true})
		}
		if n == "sqlite" && w7 > 0 {
			perStore[n] = append(perStore[n], task{store: n, seed: *seed, stall: true}, task{store: n, seed: *seed, stall: true, unsafe: true})
		}
	}
	var (
		mu      sync.Mutex
		results []*check.RunResult
		stalls  []*check.StallResult
		clis    []*check.CLIResult
		errs    = map[string][]string{}
		kept    []string
	)
	var jl *os.File
	if *jsonOut != "" {
		if jl, err = os.OpenFile(*jsonOut, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644); err != nil {
			return 0, err
		}
		defer jl.Close()
	}
	record := func(rec report.Record) {
		if jl != nil {
			b, _ := json.Marshal(rec)
			_, _ = jl.Write(append(b, '\n'))
		}
	}
	sem := make(chan struct{}, max(*parallel, 1))
	var wg sync.WaitGroup
	start := time.Now()
	for _, n := range names {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			for _, tk := range perStore[n] {
				if ctx.Err() != nil {
					return
				}
				if tk.stall {
					dir := filepath.Join(root, fmt.Sprintf("w7-unsafe-%v-%d", tk.unsafe, tk.seed))
					r, err := runStall(ctx, tk.store, dir, tk.seed, tk.unsafe, 4, w7)
					mu.Lock()
					if err != nil {
						msg := fmt.Sprintf("W7 seed %d: %v", tk.seed, err)
						errs[tk.store] = append(errs[tk.store], msg)
						if ctx.Err() == nil {
							record(report.Record{Store: tk.store, Error: msg})
						}
						logf("%s W7 seed %d: ERROR %v", tk.store, tk.seed, err)
					} else {
						stalls = append(stalls, r)
						record(report.Record{Store: r.Store, Stall: r})
						fmt.Println(report.StallSummary(r))
						_ = os.RemoveAll(dir)
					}
					mu.Unlock()
					continue
				}
				r, dir, err := runOne(ctx, tk, hc, root, t, secs)
				mu.Lock()
				switch {
				case err != nil:
					msg := fmt.Sprintf("seed %d: %v", tk.seed, err)
					errs[tk.store] = append(errs[tk.store], msg)
					if ctx.Err() == nil {
						record(report.Record{Store: tk.store, Error: msg})
					}
					kept = append(kept, dir)
					logf("%s seed %d: ERROR %v (kept %s)", tk.store, tk.seed, err, dir)
				default:
					results = append(results, r)
					record(report.Record{Store: r.Store, Result: r})
					fmt.Println(report.Summary(r))
					if len(r.Missed) > 0 || len(r.Invalid) > 0 {
						kept = append(kept, dir)
						fmt.Println("  run directory kept:", dir)
					} else {
						_ = os.RemoveAll(dir)
					}
				}
				mu.Unlock()
			}
			if !containsName(cliNames, n) || ctx.Err() != nil {
				return
			}
			// The CLI workload: one pass of its faults (a few TTLs each).
			dir := filepath.Join(root, fmt.Sprintf("%s-cli-%d", n, *seed))
			r, err := runCLI(ctx, n, *seed, t, time.Duration(secs)*time.Second/10, lh, dir)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				msg := fmt.Sprintf("cli seed %d: %v", *seed, err)
				errs[n] = append(errs[n], msg)
				if ctx.Err() == nil {
					record(report.Record{Store: n, Error: msg})
				}
				kept = append(kept, dir)
				logf("%s cli seed %d: ERROR %v (kept %s)", n, *seed, err, dir)
				return
			}
			clis = append(clis, r)
			record(report.Record{Store: n, CLI: r})
			fmt.Println(report.CLISummary(r))
			if len(r.Missed) > 0 || len(r.Invalid) > 0 {
				kept = append(kept, dir)
				fmt.Println("  run directory kept:", dir)
			} else {
				_ = os.RemoveAll(dir)
			}
		})
	}
	wg.Wait()
	if ctx.Err() != nil {
		return 0, ctx.Err()
	}
	sums := report.Aggregate(results, errs, harness.BackendNames)
	cmdline := *command
	if cmdline == "" {
		cmdline = "./scripts/faults --" + mode
	}
	md := report.Markdown(sums, stalls, mode, cmdline, time.Now()) + report.CLIMarkdown(clis, harness.BackendNames)
	if *out != "" {
		if err := os.WriteFile(*out, []byte(md), 0o644); err != nil {
			return 0, err
		}
		logf("wrote %s", *out)
	}
	code := 0
	fmt.Printf("\nsuite (%s) finished in %s:\n", mode, time.Since(start).Round(time.Second))
	for _, s := range sums {
		status := "ok"
		if s.Failed() {
			status = "FAILED"
			code = 1
		}
		fmt.Printf("  %-18s %s", s.Store, status)
		for _, m := range s.Missed {
			fmt.Printf("; missed: %s", m)
		}
		for _, m := range s.Invalid {
			fmt.Printf("; invalid: %s", m)
		}
		for _, m := range s.Errors {
			fmt.Printf("; error: %s", m)
		}
		fmt.Println()
	}
	if len(stalls) > 0 {
		safe, control, failed := report.StallVerdicts(stalls)
		status := "ok"
		if failed {
			status, code = "FAILED", 1
		}
		fmt.Printf("  %-18s %s; default options: %s; UnsafeConcurrent: %s\n", "W7 middleware", status, safe, control)
	}
	for _, r := range clis {
		status := "ok"
		if len(r.Missed) > 0 || len(r.Invalid) > 0 {
			status = "FAILED"
			code = 1
		}
		fmt.Printf("  %-18s %s; writes after the next grant %d\n", r.Store+" (cli)", status, r.AfterGrant)
	}
	if len(kept) == 0 {
		_ = os.RemoveAll(root)
	} else {
		fmt.Println("  run directories kept for inspection under", root)
	}
	return code, nil
}

func runOne(ctx context.Context, tk task, hc []string, root string, ttl time.Duration, secs int) (*check.RunResult, string, error) {
	kind := "run"
	if tk.mutation {
		kind = "mutation"
	}
	dir := filepath.Join(root, fmt.Sprintf("%s-%s-%d", tk.store, kind, tk.seed))
	b, err := harness.NewBackend(tk.store)
	if err != nil {
		return nil, dir, err
	}
	d := time.Duration(secs) * time.Second
	if tk.mutation {
		d = 0
	}
	r, err := harness.Run(ctx, harness.RunConfig{
		Backend: b, Open: open, HolderCmd: hc, Dir: dir, TTL: ttl, Duration: d,
		Seed: tk.seed, Mutation: tk.mutation,
		Log: func(format string, a ...any) { logf("[%s %d] "+format, append([]any{tk.store, tk.seed}, a...)...) },
	})
	return r, dir, err
}

func containsName(xs []string, s string) bool {
	for _, x := range xs {
		if strings.TrimSpace(x) == s {
			return true
		}
	}
	return false
}
