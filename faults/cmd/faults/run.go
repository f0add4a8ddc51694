package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/leasehold-go/leasehold/faults/check"
	"github.com/leasehold-go/leasehold/faults/harness"
	"github.com/leasehold-go/leasehold/faults/report"
)

func storeNames() string { return strings.Join(harness.BackendNames(), ", ") }

func logf(format string, a ...any) {
	fmt.Fprintf(os.Stderr, time.Now().Format("15:04:05 ")+format+"\n", a...)
}

// holderCmd is how the harness starts holder processes: this binary, in
// holder mode.
func holderCmd() ([]string, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	return []string{exe, "holder"}, nil
}

func runCmd(ctx context.Context, args []string) (int, error) {
	fs := flag.NewFlagSet("run", flag.ExitOnError)
	store := fs.String("store", "sqlite", "store: "+storeNames())
	seconds := fs.Int("seconds", 0, "run the fault schedule for at least this long (0: one pass)")
	seed := fs.Uint64("seed", uint64(time.Now().UnixNano()%100000), "seed")
	ttl := fs.Duration("ttl", time.Second, "lease TTL")
	mutation := fs.Bool("mutation", false, "disable the fence check (the checkers must catch it)")
	only := fs.String("faults", "", "comma-separated fault classes (default: all the store supports)")
	dir := fs.String("dir", "", "run directory (default: a temporary one)")
	keep := fs.Bool("keep", false, "keep the run directory")
	lh := fs.String("leasehold", "", "the leasehold binary a remote store's server runs (default: built from ../cmd)")
	readWorkload := workloadFlags(fs)
	_ = fs.Parse(args)
	wl, err := readWorkload(shortWorkload())
	if err != nil {
		return 0, err
	}
	if needsLeasehold([]string{*store}) {
		bin, cleanup, err := leaseholdBinary(*lh)
		if err != nil {
			return 0, err
		}
		defer cleanup()
		*lh = bin
	}
	b, err := newBackend(*store, *lh)
	if err != nil {
		return 0, err
	}
	hc, err := holderCmd()
	if err != nil {
		return 0, err
	}
	d := *dir
	if d == "" {
		d, err = os.MkdirTemp("", "leasehold-faults-")
		if err != nil {
			return 0, err
		}
		if !*keep {
			defer os.RemoveAll(d)
		}
	}
	_ = os.Chmod(d, 0o755)
	var fl []string
	if *only != "" {
		fl = strings.Split(*only, ",")
	}
	var wall []string
	if !*mutation && (len(fl) == 0 || slices.Contains(fl, check.F17)) {
		var cleanup func()
		if wall, cleanup, err = wallHolder(ctx); err != nil {
			return 0, err
		}
		defer cleanup()
	}
	rc := harness.RunConfig{
		Backend: b, Open: open, HolderCmd: hc, WallHolderCmd: wall, Dir: filepath.Clean(d),
		TTL: *ttl, Duration: time.Duration(*seconds) * time.Second, Seed: *seed,
		Mutation: *mutation, Faults: fl, Log: logf,
	}
	wl.apply(&rc)
	r, err := harness.Run(ctx, rc)
	if err != nil {
		if !*keep && *dir == "" {
			fmt.Fprintln(os.Stderr, "faults: run directory kept for inspection:", d)
			*keep = true
		}
		return 0, err
	}
	fmt.Println(report.Summary(r))
	if len(r.Missed) > 0 || len(r.Invalid) > 0 {
		return 1, nil
	}
	return 0, nil
}
