package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/bench"
	"github.com/leasehold-go/leasehold/storeurl"
)

// benchUsage is the text of "leasehold bench -h".
const benchUsage = `Usage: leasehold bench --store URL [--store URL ...] [--clients 1,8,64] [--duration 10s]
                       [--keys distinct|hot] [--json] [--chart out.svg] [--markdown]
                       [--scale 1,1000,10000,100000] [--herd 1,8,64] [--mem-pid PID,...]
                       [--from results.jsonl ...] [--title T]

Measures each store as its users will use it: acquire+release cycles through
a leasehold client with each number of --clients on distinct keys (one per
client) or one hot key, for --duration each, while a lease with a short TTL
is held and renewed; then the time from a release to a waiting client's
acquire. It prints one table with the stores side by side: cycles/s, acquire
latency p50/p90/p99, release latency p50/p99, errors, renewals per second of
the held lease, and the release-to-waiter hand-off time (milliseconds).

  --store NAME=URL names the store in the results (default: the store's kind).
  --scale N,...    also measure acquire latency and memory with N leases held
                   (memory: the process tree of --mem-pid, or this process
                   for sqlite:// and memory:// stores)
  --herd W,...     also measure store attempts per release and the hand-off
                   time with W clients waiting on one key (thundering herd)
  With --scale or --herd and no --clients, only those are measured.
  --from FILE      add the results of an earlier --json run (or hand-written
                   lines with "kind":"reference") to the table and chart; with
                   --from and no --store, nothing is measured.

Every store is opened and checked before any load is sent: an unreachable
store or a malformed URL is an error and nothing runs. Every lease the bench
takes is released before it exits. Ctrl-C stops it and prints what was
measured so far (exit status 130); a second Ctrl-C kills it.

Flags:
  --store URL      a store to measure (repeatable; default $LEASEHOLD_STORE,
                   else the embedded file)
  --clients LIST   numbers of concurrent clients (default 1,8,64)
  --duration D     how long each client count cycles (default 10s)
  --keys MODE      distinct (one key per client) or hot (one key for all)
  --json           print one JSON object per result instead of the table
  --markdown       print the table in Markdown
  --chart FILE     draw latency and throughput as an SVG image in FILE
  --title T        the chart's title
  --scale LIST     held-lease counts to measure at (e.g. 1,1000,10000,100000)
  --probes N       cycles timed at each held-lease count (default 200)
  --herd LIST      numbers of waiting clients (e.g. 1,8,64)
  --mem-pid LIST   server process ids whose memory --scale reports
  --handoffs N     release-to-waiter hand-offs timed per run (default 10)
  --from FILE      earlier results to include (repeatable)

Exit status: 0 success; 1 a store failed or a measurement counted errors;
2 bad usage; 130 interrupted.
`

// listFlag collects a repeatable flag.
type listFlag []string

func (l *listFlag) String() string { return strings.Join(*l, " ") }

func (l *listFlag) Set(s string) error {
	*l = append(*l, s)
	return nil
}

// benchTarget is one store the bench measures.
type benchTarget struct {
	name   string
	url    string
	scheme string
	st     leasehold.Store
}

// benchPlan is the validated command line.
type benchPlan struct {
	targets  []benchTarget
	clients  []int
	duration time.Duration
	keys     bench.KeyMode
	scale    []int
	probes   int
	herd     []int
	memPIDs  []int
	handoffs int
	cycles   bool
	asJSON   bool
	format   bench.Format
	chart    string
	title    string
	previous bench.Report
}

func (a *app) bench(args []string) int {
	fs := newFlags("bench")
	var stores, froms listFlag
	fs.Var(&stores, "store", "store URL (repeatable)")
	fs.Var(&froms, "from", "earlier results (repeatable)")
	clients := fs.String("clients", "1,8,64", "numbers of concurrent clients")
	duration := durationFlag(fs, "duration", 10*time.Second, "how long each client count cycles")
	keys := fs.String("keys", "distinct", "distinct or hot")
	asJSON := fs.Bool("json", false, "print JSON lines")
	markdown := fs.Bool("markdown", false, "print the table in Markdown")
	chart := fs.String("chart", "", "SVG file to draw")
	title := fs.String("title", "leasehold bench", "the chart's title")
	scale := fs.String("scale", "", "held-lease counts")
	probes := fs.Int("probes", 200, "cycles timed per held-lease count")
	herd := fs.String("herd", "", "numbers of waiting clients")
	memPID := fs.String("mem-pid", "", "server process ids for --scale memory")
	handoffs := fs.Int("handoffs", 10, "hand-offs timed per run")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(a.stdout, benchUsage)
			return exitOK
		}
		fmt.Fprintf(a.stderr, "leasehold bench: %v (see leasehold bench -h)\n", err)
		return exitUsage
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })

	p := &benchPlan{duration: *duration, asJSON: *asJSON, chart: *chart, title: *title, probes: *probes, handoffs: *handoffs}
	if *markdown {
		p.format = bench.Markdown
	}
	var errs []error
	errs = append(errs, noArgs(fs))
	var err error
	if p.clients, err = parseCounts("--clients", *clients, 1); err != nil {
		errs = append(errs, err)
	}
	if *scale != "" {
		if p.scale, err = parseCounts("--scale", *scale, 0); err != nil {
			errs = append(errs, err)
		}
	}
	if *herd != "" {
		if p.herd, err = parseCounts("--herd", *herd, 1); err != nil {
			errs = append(errs, err)
		}
	}
	if *memPID != "" {
		if p.memPIDs, err = parseCounts("--mem-pid", *memPID, 1); err != nil {
			errs = append(errs, err)
		}
	}
	if p.keys, err = bench.ParseKeyMode(*keys); err != nil {
		errs = append(errs, usagef("--keys %q: use distinct (one key per client) or hot (one key for all)", *keys))
	}
	if p.duration <= 0 {
		errs = append(errs, usagef("--duration %s: give a positive duration such as 10s", p.duration))
	}
	if p.probes <= 0 {
		errs = append(errs, usagef("--probes %d: give a positive number", p.probes))
	}
	if p.handoffs < 0 {
		errs = append(errs, usagef("--handoffs %d is negative (0 times none)", p.handoffs))
	}
	if p.handoffs == 0 {
		p.handoffs = -1 // bench.Options: negative for none
	}
	p.cycles = set["clients"] || (len(p.scale) == 0 && len(p.herd) == 0)
	for _, f := range froms {
		if err := readResults(f, &p.previous); err != nil {
			errs = append(errs, err)
		}
	}
	if p.chart != "" {
		if err := checkWritable(p.chart); err != nil {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return a.fail("bench", err)
	}
	if len(stores) == 0 && len(froms) == 0 {
		stores = append(stores, "") // the default store
	}

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	context.AfterFunc(ctx, stop) // a second signal kills

	// Open and check every store before any load is sent.
	defer func() {
		for _, t := range p.targets {
			t.st.Close()
		}
	}()
	names := map[string]int{}
	for _, s := range stores {
		name, raw := splitStoreName(s)
		if name != "" && raw == "" {
			return a.fail("bench", usagef("--store %s: no URL after the name", s))
		}
		st, err := openStore(ctx, raw)
		if err != nil {
			return a.fail("bench", err)
		}
		t := benchTarget{name: name, url: raw, scheme: scheme(raw), st: st}
		p.targets = append(p.targets, t)
		if err := bench.Reachable(ctx, st, 10*time.Second); err != nil {
			return a.fail("bench", fmt.Errorf("store %s: %w", redact(raw), err))
		}
		if t.name == "" {
			t.name = st.Info().Name
		}
		if names[t.name]++; names[t.name] > 1 {
			t.name = fmt.Sprintf("%s (%d)", t.name, names[t.name])
		}
		p.targets[len(p.targets)-1] = t
	}
	return a.runBench(ctx, p)
}

// runBench measures every target as p says and prints the results.
func (a *app) runBench(ctx context.Context, p *benchPlan) int {
	rep := p.previous
	var fresh bench.Report
	prog := newProgress(a.stderr)
	emit := func(r bench.Report) {
		if p.asJSON {
			if err := bench.WriteJSON(a.stdout, r); err != nil {
				fmt.Fprintf(a.stderr, "leasehold bench: %v\n", err)
			}
		}
	}
	if p.asJSON {
		emit(rep)
	}
measure:
	for _, t := range p.targets {
		if p.cycles {
			for _, n := range p.clients {
				r, err := bench.Run(ctx, t.st, bench.Options{
					Name: t.name, Clients: n, Duration: p.duration, Keys: p.keys, HandoffRounds: p.handoffs,
					Progress: prog.report, ProgressEvery: prog.every,
				})
				prog.clear()
				if err != nil && !r.Partial {
					fmt.Fprintf(a.stderr, "leasehold bench: %s: %s\n", t.name, message(err))
					break measure
				}
				fresh.Cycles = append(fresh.Cycles, r)
				emit(bench.Report{Cycles: []bench.Result{r}})
				if ctx.Err() != nil {
					break measure
				}
			}
		}
		if len(p.scale) > 0 {
			rs, err := bench.Scale(ctx, t.st, bench.ScaleOptions{
				Name: t.name, Held: p.scale, Probes: p.probes, Memory: p.memory(t),
				Progress: prog.report, ProgressEvery: prog.every,
			})
			prog.clear()
			fresh.Scale = append(fresh.Scale, rs...)
			emit(bench.Report{Scale: rs})
			if err != nil && ctx.Err() == nil {
				fmt.Fprintf(a.stderr, "leasehold bench: %s: %s\n", t.name, message(err))
			}
			if ctx.Err() != nil {
				break measure
			}
		}
		for _, w := range p.herd {
			r, err := bench.Herd(ctx, t.st, bench.HerdOptions{
				Name: t.name, Waiters: w, Progress: prog.report, ProgressEvery: prog.every,
			})
			prog.clear()
			if err != nil && !r.Partial {
				fmt.Fprintf(a.stderr, "leasehold bench: %s: %s\n", t.name, message(err))
				break measure
			}
			fresh.Herd = append(fresh.Herd, r)
			emit(bench.Report{Herd: []bench.HerdResult{r}})
			if ctx.Err() != nil {
				break measure
			}
		}
	}
	interrupted := ctx.Err() != nil
	if interrupted {
		fmt.Fprintln(a.stderr, "leasehold bench: interrupted; these are the figures measured so far")
	}
	rep.Cycles = append(rep.Cycles, fresh.Cycles...)
	rep.Scale = append(rep.Scale, fresh.Scale...)
	rep.Herd = append(rep.Herd, fresh.Herd...)

	code := exitOK
	if !p.asJSON {
		if err := bench.WriteTable(a.stdout, rep, p.format); err != nil {
			fmt.Fprintf(a.stderr, "leasehold bench: %v\n", err)
			code = exitFailure
		}
	}
	if p.chart != "" {
		if err := writeChart(p.chart, rep, p.title); err != nil {
			fmt.Fprintf(a.stderr, "leasehold bench: %v\n", err)
			code = exitFailure
		}
	}
	if n := reportErrors(a.stderr, fresh); n > 0 && code == exitOK {
		code = exitFailure
	}
	if interrupted {
		return exitInterrupted
	}
	return code
}

// memory chooses how --scale measures the memory of target t.
func (p *benchPlan) memory(t benchTarget) bench.MemProbe {
	switch {
	case len(p.memPIDs) > 0:
		return bench.ProcessMemory(p.memPIDs...)
	}
	k, _ := storeurl.Lookup(t.scheme)
	switch k.Memory {
	case storeurl.MemoryHeap:
		return bench.HeapMemory()
	case storeurl.MemoryProcess:
		return bench.ProcessMemory(0)
	}
	return nil // a server's memory needs --mem-pid
}

// reportErrors prints the first error of every result that counted some,
// and returns how many results did.
func reportErrors(w io.Writer, rep bench.Report) int {
	n := 0
	note := func(what string, count int64, first string) {
		if count > 0 {
			n++
			fmt.Fprintf(w, "leasehold bench: %s: %d errors; the first: %s\n", what, count, message(errors.New(first)))
		}
	}
	for _, r := range rep.Cycles {
		note(fmt.Sprintf("%s with %d clients", r.Store, r.Clients), r.Errors, r.FirstError)
	}
	for _, r := range rep.Scale {
		note(fmt.Sprintf("%s with %d leases held", r.Store, r.Held), r.Errors, r.FirstError)
	}
	for _, r := range rep.Herd {
		note(fmt.Sprintf("%s with %d waiters", r.Store, r.Waiters), r.Errors, r.FirstError)
	}
	return n
}

// parseCounts parses a comma-separated list of integers of at least least.
func parseCounts(flagName, s string, least int) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		n, err := strconv.Atoi(strings.ReplaceAll(f, "_", ""))
		if err != nil || n < least {
			what := "positive whole numbers"
			if least == 0 {
				what = "whole numbers"
			}
			return nil, usagef("%s %q: give a comma-separated list of %s, such as 1,8,64", flagName, s, what)
		}
		out = append(out, n)
	}
	return out, nil
}

// splitStoreName splits "NAME=URL" into its parts. NAME is letters,
// digits and ._+- ; a value without one (a URL's own "=" comes after its
// scheme's ":") gives an empty name.
func splitStoreName(s string) (name, rawURL string) {
	i := strings.IndexByte(s, '=')
	if i <= 0 {
		return "", s
	}
	for _, r := range s[:i] {
		ok := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("._+-", r)
		if !ok {
			return "", s
		}
	}
	return s[:i], s[i+1:]
}

// scheme returns the URL's scheme in lower case, "" if it has none.
func scheme(raw string) string {
	if i := strings.Index(raw, ":"); i > 0 {
		return strings.ToLower(raw[:i])
	}
	return ""
}

// redact hides a URL's password for messages.
func redact(raw string) string {
	if u, err := url.Parse(raw); err == nil {
		return u.Redacted()
	}
	return "(the URL given)"
}

// readResults adds the results in file to rep.
func readResults(file string, rep *bench.Report) error {
	f, err := os.Open(file)
	if err != nil {
		return usagef("--from: %v", err)
	}
	defer f.Close()
	if err := bench.ReadJSON(f, rep); err != nil {
		return usagef("--from %s: %s", file, strings.TrimPrefix(err.Error(), "bench: "))
	}
	return nil
}

// checkWritable fails unless a file can be created in path's directory,
// so that a chart that could not be written is found before the load.
func checkWritable(path string) error {
	f, err := os.CreateTemp(filepath.Dir(path), ".leasehold-bench-*")
	if err != nil {
		return usagef("--chart %s: cannot write there: %v", path, err)
	}
	name := f.Name()
	f.Close()
	return os.Remove(name)
}

// writeChart writes the SVG chart to path through a temporary file.
func writeChart(path string, rep bench.Report, title string) error {
	f, err := os.CreateTemp(filepath.Dir(path), ".leasehold-bench-*")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	if err := bench.WriteSVG(f, rep, title); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Chmod(f.Name(), 0o644); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}

// progress prints the progress line on stderr: redrawn in place on a
// terminal, else a line every few seconds.
type progress struct {
	w     io.Writer
	tty   bool
	every time.Duration

	mu    sync.Mutex
	last  time.Time
	phase string
	shown bool
}

func newProgress(w io.Writer) *progress {
	p := &progress{w: w, every: 2 * time.Second}
	if f, ok := w.(*os.File); ok {
		if fi, err := f.Stat(); err == nil && fi.Mode()&os.ModeCharDevice != 0 {
			p.tty, p.every = true, 500*time.Millisecond
		}
	}
	return p
}

func (p *progress) report(pr bench.Progress) {
	p.mu.Lock()
	defer p.mu.Unlock()
	line := "leasehold bench: " + progressText(pr)
	if p.tty {
		fmt.Fprintf(p.w, "\r%s\x1b[K", line)
		p.shown = true
		return
	}
	key := pr.Store + "/" + pr.Phase + "/" + strconv.Itoa(pr.Clients)
	if key != p.phase || time.Since(p.last) >= 10*time.Second {
		fmt.Fprintln(p.w, line)
		p.phase, p.last = key, time.Now()
	}
}

// clear removes the progress line from a terminal.
func (p *progress) clear() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.tty && p.shown {
		fmt.Fprint(p.w, "\r\x1b[K")
		p.shown = false
	}
}

func progressText(p bench.Progress) string {
	el := p.Elapsed.Round(100 * time.Millisecond)
	errs := ""
	if p.Errors > 0 {
		errs = fmt.Sprintf(", %d errors", p.Errors)
	}
	switch p.Phase {
	case "cycles":
		return fmt.Sprintf("%s, %d clients: %s of %s, %s cycles%s", p.Store, p.Clients, el, p.Total, thousands(p.Done), errs)
	case "handoff":
		return fmt.Sprintf("%s, %d clients: hand-off %d of %d%s", p.Store, p.Clients, p.Done, p.Target, errs)
	case "fill":
		return fmt.Sprintf("%s: acquiring leases to hold: %s of %s (%s)%s", p.Store, thousands(p.Done), thousands(p.Target), el, errs)
	case "probe":
		return fmt.Sprintf("%s: timing cycles with %s leases held%s", p.Store, thousands(int64(p.Clients)), errs)
	case "release":
		return fmt.Sprintf("%s: releasing held leases: %s of %s%s", p.Store, thousands(p.Done), thousands(p.Target), errs)
	case "herd":
		return fmt.Sprintf("%s, %d waiters: %d of %d hand-offs (%s)%s", p.Store, p.Clients, p.Done, p.Target, el, errs)
	}
	return fmt.Sprintf("%s: %s %s", p.Store, p.Phase, el)
}

// thousands formats n with thousands separators.
func thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	for i := len(s) - 3; i > 0 && s[i-1] != '-'; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
