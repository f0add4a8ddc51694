package main

import (
	"context"
	"encoding/json"
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

// suite is a run of the suite: its configuration and what its runs found.
type suite struct {
	cfg  suiteConfig
	hc   []string // the holder command
	wall []string // the holder command with the patched time package (F17)
	lh   string   // the leasehold binary, for the CLI workload
	root string   // the runs' directories

	mu      sync.Mutex
	results []*check.RunResult
	stalls  []*check.StallResult
	clis    []*check.CLIResult
	prims   []*check.PrimResult
	errs    map[string][]string
	kept    []string
	jl      *os.File // the -json results file
}

// suiteCmd runs the suite: every store's runs (stores side by side up to
// -parallel), then the report and a summary; status 1 when a store missed
// a target it claims or a run was invalid.
func suiteCmd(ctx context.Context, args []string) (int, error) {
	cfg, err := parseSuite(args)
	if err != nil {
		return 0, err
	}
	s := &suite{cfg: cfg, errs: map[string][]string{}}
	if s.hc, err = holderCmd(); err != nil {
		return 0, err
	}
	wall, cleanup, err := wallHolder(ctx)
	if err != nil {
		return 0, err
	}
	defer cleanup()
	s.wall = wall
	if len(cfg.cliNames) > 0 || needsLeasehold(cfg.names) {
		bin, cleanup, err := leaseholdBinary(cfg.lhBin)
		if err != nil {
			return 0, err
		}
		defer cleanup()
		s.lh, s.cfg.lhBin = bin, bin
	}
	if s.root, err = os.MkdirTemp("", "leasehold-faults-"); err != nil {
		return 0, err
	}
	_ = os.Chmod(s.root, 0o755)
	logf("suite (%s): stores %s (%d at a time), %d run(s) x %d s each (budget per store: %s), TTL %s, %s, seeds from %d, work in %s",
		cfg.mode, cfg.stores, cfg.parallel, cfg.nRuns, cfg.secs, cfg.budget, cfg.ttl, cfg.wl, cfg.seed, s.root)
	if cfg.jsonOut != "" {
		if s.jl, err = os.OpenFile(cfg.jsonOut, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644); err != nil {
			return 0, err
		}
		defer s.jl.Close()
	}
	perStore := cfg.plan()
	sem := make(chan struct{}, cfg.parallel)
	var wg sync.WaitGroup
	start := time.Now()
	for _, n := range cfg.names {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			s.runStore(ctx, n, perStore[n])
		})
	}
	wg.Wait()
	if ctx.Err() != nil {
		return 0, ctx.Err()
	}
	return s.finish(start)
}

// record appends rec to the -json results file, if any. s.mu held.
func (s *suite) record(rec report.Record) {
	if s.jl != nil {
		b, _ := json.Marshal(rec)
		_, _ = s.jl.Write(append(b, '\n'))
	}
}

// failed records a run that could not be made. s.mu held.
func (s *suite) failed(ctx context.Context, store, msg string) {
	s.errs[store] = append(s.errs[store], msg)
	if ctx.Err() == nil {
		s.record(report.Record{Store: store, Error: msg})
	}
}

// done keeps dir for inspection if the run missed a target or was
// invalid, or if it passed with something worth a look (inspect), and
// removes it otherwise. s.mu held.
func (s *suite) done(dir string, bad bool) {
	if bad {
		s.kept = append(s.kept, dir)
		fmt.Println("  run directory kept:", dir)
		return
	}
	_ = os.RemoveAll(dir)
}

// runStore runs store n's tasks one after the other, then its CLI workload
// run if it has one. With a budget, the runs it must not cut (the mutation
// run, W7, the CLI workload) go first, and the regular runs follow while
// the budget lasts.
func (s *suite) runStore(ctx context.Context, n string, tasks []task) {
	if s.cfg.primsOnly {
		if containsName(s.cfg.primNames, n) {
			s.runPrims(ctx, n)
		}
		return
	}
	start := time.Now()
	cli := containsName(s.cfg.cliNames, n)
	if s.cfg.budget > 0 {
		var regular []task
		for _, tk := range tasks {
			if tk.stall || tk.mutation {
				s.runTasks(ctx, []task{tk})
			} else {
				regular = append(regular, tk)
			}
		}
		if cli && ctx.Err() == nil {
			s.runCLI(ctx, n)
		}
		if containsName(s.cfg.primNames, n) {
			s.runPrims(ctx, n)
		}
		s.runBudgeted(ctx, n, regular, start)
		return
	}
	s.runTasks(ctx, tasks)
	if cli && ctx.Err() == nil {
		s.runCLI(ctx, n)
	}
	if containsName(s.cfg.primNames, n) {
		s.runPrims(ctx, n)
	}
}

// runTasks runs tasks one after the other.
func (s *suite) runTasks(ctx context.Context, tasks []task) {
	for _, tk := range tasks {
		if ctx.Err() != nil {
			return
		}
		if tk.stall {
			s.runStall(ctx, tk)
		} else {
			s.runTask(ctx, tk)
		}
	}
}

// runBudgeted runs store n's regular runs while the budget lasts: a run
// starts only if the time since start plus the longest run so far still
// fits in it (the first one always starts).
func (s *suite) runBudgeted(ctx context.Context, n string, tasks []task, start time.Time) {
	var longest time.Duration
	for i, tk := range tasks {
		if ctx.Err() != nil {
			return
		}
		if i > 0 && time.Since(start)+longest > s.cfg.budget {
			logf("%s: %d of %d runs fitted in its budget of %s (its longest run took %s)", n, i, len(tasks), s.cfg.budget, longest.Round(time.Second))
			return
		}
		t0 := time.Now()
		s.runTask(ctx, tk)
		longest = max(longest, time.Since(t0))
	}
}

// runStall runs one W7 run.
func (s *suite) runStall(ctx context.Context, tk task) {
	dir := filepath.Join(s.root, fmt.Sprintf("w7-unsafe-%v-%d", tk.unsafe, tk.seed))
	r, err := runStall(ctx, tk.store, dir, tk.seed, tk.unsafe, 4, s.cfg.w7)
	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil {
		s.failed(ctx, tk.store, fmt.Sprintf("W7 seed %d: %v", tk.seed, err))
		logf("%s W7 seed %d: ERROR %v", tk.store, tk.seed, err)
		return
	}
	s.stalls = append(s.stalls, r)
	s.record(report.Record{Store: r.Store, Stall: r})
	fmt.Println(report.StallSummary(r))
	_ = os.RemoveAll(dir)
}

// runTask runs one regular or mutation run.
func (s *suite) runTask(ctx context.Context, tk task) {
	r, dir, err := runOne(ctx, tk, s.hc, s.wall, s.root, s.cfg)
	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil {
		s.failed(ctx, tk.store, fmt.Sprintf("seed %d: %v", tk.seed, err))
		s.kept = append(s.kept, dir)
		logf("%s seed %d: ERROR %v (kept %s)", tk.store, tk.seed, err, dir)
		return
	}
	s.results = append(s.results, r)
	s.record(report.Record{Store: r.Store, Result: r})
	fmt.Println(report.Summary(r))
	s.done(dir, len(r.Missed) > 0 || len(r.Invalid) > 0 || inspect(r))
}

// runCLI runs the CLI workload on store n: one pass of its faults (a few
// TTLs each).
func (s *suite) runCLI(ctx context.Context, n string) {
	seed := s.cfg.seed
	dir := filepath.Join(s.root, fmt.Sprintf("%s-cli-%d", n, seed))
	r, err := runCLI(ctx, n, seed, s.cfg.ttl, time.Duration(s.cfg.secs)*time.Second/10, s.lh, dir)
	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil {
		s.failed(ctx, n, fmt.Sprintf("cli seed %d: %v", seed, err))
		s.kept = append(s.kept, dir)
		logf("%s cli seed %d: ERROR %v (kept %s)", n, seed, err, dir)
		return
	}
	s.clis = append(s.clis, r)
	s.record(report.Record{Store: n, CLI: r})
	fmt.Println(report.CLISummary(r))
	s.done(dir, len(r.Missed) > 0 || len(r.Invalid) > 0)
}

// finish writes the report and prints the verdicts; its status is 1 when
// a store or a workload failed.
func (s *suite) finish(start time.Time) (int, error) {
	sums := report.Aggregate(s.results, s.errs, harness.BackendNames())
	report.AddFaultNotes(sums, harness.StaticFault)
	md := report.Markdown(sums, s.stalls, s.cfg.mode, s.cfg.command, time.Now()) + report.CLIMarkdown(s.clis, harness.BackendNames()) + report.PrimMarkdown(s.prims, harness.BackendNames())
	if s.cfg.out != "" {
		if old, err := os.ReadFile(s.cfg.out); err == nil {
			md = report.KeepTail(md, string(old)) // its Fuzzing section
		}
		if err := os.WriteFile(s.cfg.out, []byte(md), 0o644); err != nil {
			return 0, err
		}
		logf("wrote %s", s.cfg.out)
	}
	fmt.Printf("\nsuite (%s) finished in %s:\n", s.cfg.mode, time.Since(start).Round(time.Second))
	code := printStores(sums, s.cfg.mode == "long")
	if len(s.stalls) > 0 {
		safe, control, failed := report.StallVerdicts(s.stalls)
		status := "ok"
		if failed {
			status, code = "FAILED", 1
		}
		fmt.Printf("  %-18s %s; default options: %s; UnsafeConcurrent: %s\n", "W7 middleware", status, safe, control)
	}
	for _, r := range s.clis {
		status := "ok"
		if len(r.Missed) > 0 || len(r.Invalid) > 0 {
			status = "FAILED"
			code = 1
		}
		fmt.Printf("  %-18s %s; writes after the next grant %d\n", r.Store+" (cli)", status, r.AfterGrant)
	}
	for _, r := range s.prims {
		if len(r.Missed) > 0 || len(r.Invalid) > 0 {
			code = 1
			fmt.Printf("  %-18s FAILED; %s\n", r.Store+" ("+r.Workload+")", strings.Join(append(r.Missed, r.Invalid...), "; "))
		}
	}
	if len(s.kept) == 0 {
		_ = os.RemoveAll(s.root)
	} else {
		fmt.Println("  run directories kept for inspection under", s.root)
	}
	return code, nil
}

// printStores prints each store's verdict, with its fenced writes and the
// machine's load during its runs; 1 if one failed. With target, a store
// below LongTarget fenced writes says so (it does not fail the suite).
func printStores(sums []*report.StoreSummary, target bool) int {
	code := 0
	for _, s := range sums {
		status := "ok"
		if s.Failed() {
			status = "FAILED"
			code = 1
		}
		fmt.Printf("  %-18s %s; %d fenced writes in %d runs, load %.1f-%.1f", s.Store, status, s.Sum.FencedWrites, s.Runs, s.LoadMin, s.LoadMax)
		if target && s.Sum.FencedWrites < LongTarget {
			fmt.Printf(" (BELOW the %d target)", LongTarget)
		}
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
	return code
}

// LongTarget is the fenced writes per store the long mode aims at (issue
// 31): the suite's end says which stores fell short.
const LongTarget = 100000

func runOne(ctx context.Context, tk task, hc, wall []string, root string, cfg suiteConfig) (*check.RunResult, string, error) {
	kind := "run"
	if tk.mutation {
		kind = "mutation"
	}
	dir := filepath.Join(root, fmt.Sprintf("%s-%s-%d", tk.store, kind, tk.seed))
	b, err := newBackend(tk.store, cfg.lhBin)
	if err != nil {
		return nil, dir, err
	}
	d := time.Duration(cfg.secs) * time.Second
	if tk.mutation {
		d = 0
	}
	rc := harness.RunConfig{
		Backend: b, Open: open, HolderCmd: hc, WallHolderCmd: wall, Dir: dir, TTL: cfg.ttl, Duration: d,
		Seed: tk.seed, Mutation: tk.mutation,
		Log: func(format string, a ...any) { logf("[%s %d] "+format, append([]any{tk.store, tk.seed}, a...)...) },
	}
	cfg.wl.apply(&rc)
	r, err := harness.Run(ctx, rc)
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

// inspect reports whether a run that met its targets still showed what a
// reader of the page would want the history of: concurrent holders
// outside every fault's window (the store granted a key its holder still
// believed in, with no fault to explain it).
func inspect(r *check.RunResult) bool {
	return r.Metrics != nil && r.Metrics.DoubleByFault["none"] > 0
}
