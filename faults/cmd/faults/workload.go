package main

import (
	"flag"
	"fmt"
	"time"

	"github.com/leasehold-go/leasehold/faults/harness"
)

// workload is the holders' side of a run: how many holders, keys and
// operations, and how long each operation works. Zero fields take the
// harness's defaults (harness.RunConfig).
type workload struct {
	holders, keys  int
	work, gap      time.Duration
	opsMin, opsMax int
}

// workloadFlags defines the workload's flags on fs; the returned function
// reads them after fs.Parse, taking what was not given from def.
func workloadFlags(fs *flag.FlagSet) func(def workload) (workload, error) {
	holders := fs.Int("holders", 0, "holder processes contending for the keys, one goroutine per key each (default 3)")
	keys := fs.Int("keys", 0, "keys k0..k(N-1) the holders contend for (default 2; the suite's -long: 8)")
	work := fs.Duration("work", 0, "each protected operation's pause between its read and its writes (default: TTL/5, at most 200ms; the suite's -long: 100ms)")
	gap := fs.Duration("gap", 0, "a holder's longest pause between a release and its next acquire (default: TTL/4, at most 250ms)")
	ops := fs.String("ops", "", "protected operations per hold, MIN-MAX (default 2-6; the suite's -long: 4-12)")
	return func(def workload) (workload, error) {
		w := workload{holders: *holders, keys: *keys, work: *work, gap: *gap}
		if w.work == 0 {
			w.work = def.work
		}
		if w.holders == 0 {
			w.holders = def.holders
		}
		if w.keys == 0 {
			w.keys = def.keys
		}
		if *ops == "" {
			w.opsMin, w.opsMax = def.opsMin, def.opsMax
		} else if _, err := fmt.Sscanf(*ops, "%d-%d", &w.opsMin, &w.opsMax); err != nil {
			return w, fmt.Errorf("-ops %q: want MIN-MAX", *ops)
		}
		if w.holders < 1 || w.keys < 1 || w.work < 0 || w.gap < 0 || w.opsMin < 1 || w.opsMax < w.opsMin {
			return w, fmt.Errorf("-holders %d, -keys %d, -ops %d-%d: want at least 1 (MIN <= MAX); -work %s, -gap %s: not negative",
				w.holders, w.keys, w.opsMin, w.opsMax, w.work, w.gap)
		}
		return w, nil
	}
}

// shortWorkload and longWorkload are each mode's workload: the short mode's (and a single run's) is the one
// CI has always run; the long mode's makes about four times as many fenced
// writes a second (see faults/README.md).
func shortWorkload() workload { return workload{holders: 3, keys: 2, opsMin: 2, opsMax: 6} }

func longWorkload() workload {
	return workload{holders: 3, keys: 8, work: 100 * time.Millisecond, opsMin: 4, opsMax: 12}
}

// apply sets the workload in cfg.
func (w workload) apply(cfg *harness.RunConfig) {
	cfg.Holders, cfg.Keys = w.holders, harness.KeyNames(w.keys)
	cfg.Work, cfg.Gap, cfg.OpsMin, cfg.OpsMax = w.work, w.gap, w.opsMin, w.opsMax
}

// String is the workload for the suite's log.
func (w workload) String() string {
	work, gap := "TTL/5 (<= 200ms)", "TTL/4 (<= 250ms)"
	if w.work > 0 {
		work = w.work.String()
	}
	if w.gap > 0 {
		gap = w.gap.String()
	}
	return fmt.Sprintf("%d holders x %d keys, %d-%d ops per hold, work %s, gap %s", w.holders, w.keys, w.opsMin, w.opsMax, work, gap)
}
