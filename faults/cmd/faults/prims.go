package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/leasehold-go/leasehold/faults/check"
	"github.com/leasehold-go/leasehold/faults/prims"
	"github.com/leasehold-go/leasehold/faults/report"
)

// primsCmd runs W8 or W9 once: faults prims -store NAME -workload W8|W9
// [-seconds S] [-ttl D] [-seed N] [-mutation] [-dir D] [-keep].
func primsCmd(ctx context.Context, args []string) (int, error) {
	fs := flag.NewFlagSet("prims", flag.ExitOnError)
	store := fs.String("store", "sqlite", "store: "+storeNames())
	workload := fs.String("workload", prims.W8, "W8 (the semaphore) or W9 (the read-write lock)")
	seconds := fs.Int("seconds", 0, "run the fault schedule for at least this long (0: one pass)")
	seed := fs.Uint64("seed", uint64(time.Now().UnixNano()%100000), "seed")
	ttl := fs.Duration("ttl", 750*time.Millisecond, "lease TTL")
	mutation := fs.Bool("mutation", false, "break the primitive and disable the fence (the checks must catch it)")
	dir := fs.String("dir", "", "run directory (default: a temporary one)")
	keep := fs.Bool("keep", false, "keep the run directory")
	_ = fs.Parse(args)
	d := *dir
	if d == "" {
		var err error
		if d, err = os.MkdirTemp("", "leasehold-faults-prims-"); err != nil {
			return 0, err
		}
		if !*keep {
			defer os.RemoveAll(d)
		}
	}
	r, err := runPrim(ctx, *store, *workload, *seed, *ttl, time.Duration(*seconds)*time.Second, *mutation, "", filepath.Clean(d))
	if err != nil {
		return 0, err
	}
	fmt.Println(report.PrimSummary(r))
	if len(r.Missed) > 0 || len(r.Invalid) > 0 {
		return 1, nil
	}
	return 0, nil
}

func runPrim(ctx context.Context, store, workload string, seed uint64, ttl, d time.Duration, mutation bool, lh, dir string) (*check.PrimResult, error) {
	b, err := newBackend(store, lh)
	if err != nil {
		return nil, err
	}
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	return prims.Run(ctx, prims.Config{
		Backend: b, Open: open, HolderCmd: []string{exe, "prim-holder"}, Workload: workload, Dir: dir,
		TTL: ttl, Duration: d, Mutation: mutation, Seed: seed,
		Log: func(format string, a ...any) {
			logf("[%s %s %d] "+format, append([]any{store, workload, seed}, a...)...)
		},
	})
}

// runPrims runs store n's W8 and W9 (one pass of their faults each), and
// their mutation runs where the store has a mutation run.
func (s *suite) runPrims(ctx context.Context, n string) {
	mut := containsName(strings.Split(s.cfg.mutStores, ","), n)
	for _, wl := range []string{prims.W8, prims.W9} {
		for _, m := range []bool{false, true} {
			if ctx.Err() != nil || (m && !mut) {
				continue
			}
			seed := s.cfg.seed
			dir := filepath.Join(s.root, fmt.Sprintf("%s-%s-mut%v-%d", n, wl, m, seed))
			r, err := runPrim(ctx, n, wl, seed, s.cfg.ttl, time.Duration(s.cfg.primSecs)*time.Second, m, s.cfg.lhBin, dir)
			s.mu.Lock()
			if err != nil {
				s.failed(ctx, n, fmt.Sprintf("%s seed %d: %v", wl, seed, err))
				s.kept = append(s.kept, dir)
				logf("%s %s seed %d: ERROR %v (kept %s)", n, wl, seed, err, dir)
			} else {
				s.prims = append(s.prims, r)
				s.record(report.Record{Store: n, Prim: r})
				fmt.Println(report.PrimSummary(r))
				s.done(dir, len(r.Missed) > 0 || len(r.Invalid) > 0)
			}
			s.mu.Unlock()
		}
	}
}
