package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/leasehold-go/leasehold/faults/check"
	"github.com/leasehold-go/leasehold/faults/harness"
	"github.com/leasehold-go/leasehold/faults/report"
	"github.com/leasehold-go/leasehold/faults/stall"
)

// stallCmd runs W7, fence.Middleware under stalled writers, twice: with the
// default options (no stale write may land) and with UnsafeConcurrent (the
// negative control, which must land some).
func stallCmd(ctx context.Context, args []string) (int, error) {
	fs := flag.NewFlagSet("stall", flag.ExitOnError)
	store := fs.String("store", "sqlite", "store the writers lease from: "+storeNames())
	seconds := fs.Int("seconds", 10, "seconds per run")
	seed := fs.Uint64("seed", uint64(time.Now().UnixNano()%100000), "seed")
	writers := fs.Int("writers", 4, "writers")
	dir := fs.String("dir", "", "run directory (default: a temporary one, removed)")
	_ = fs.Parse(args)
	d := *dir
	if d == "" {
		var err error
		if d, err = os.MkdirTemp("", "leasehold-faults-w7-"); err != nil {
			return 0, err
		}
		defer os.RemoveAll(d)
	}
	code := 0
	for _, unsafe := range []bool{false, true} {
		r, err := runStall(ctx, *store, filepath.Join(d, fmt.Sprintf("w7-unsafe-%v", unsafe)), *seed, unsafe, *writers, *seconds)
		if err != nil {
			return 0, err
		}
		fmt.Println(report.StallSummary(r))
		if len(r.Missed) > 0 || len(r.Invalid) > 0 {
			code = 1
		}
	}
	return code, nil
}

func runStall(ctx context.Context, store, dir string, seed uint64, unsafe bool, writers, seconds int) (*check.StallResult, error) {
	b, err := harness.NewBackend(store)
	if err != nil {
		return nil, err
	}
	return stall.Run(ctx, stall.Config{
		Backend: b, Open: open, Dir: dir, Unsafe: unsafe, Writers: writers,
		Duration: time.Duration(seconds) * time.Second, Seed: seed,
		Log: func(format string, a ...any) { logf("[%s %d W7] "+format, append([]any{store, seed}, a...)...) },
	})
}
