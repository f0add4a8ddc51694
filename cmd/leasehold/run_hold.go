package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/leasehold-go/leasehold"
)

// The bounds of --tick: a tick shorter than a second is no schedule a
// command line keeps, and a week is the longest period cron repeats alike.
const (
	minTick = time.Second
	maxTick = 7 * 24 * time.Hour
)

// holdFlags defines run's --min-hold and --tick.
func holdFlags(fs *flag.FlagSet) (minHold, tick *time.Duration) {
	minHold = durationFlag(fs, "min-hold", 0, "keep KEY held for at least D after the grant, even when the command exits sooner")
	tick = durationFlag(fs, "tick", 0, "key the lease by the tick of period D (KEY/TICK) and hold it until the tick ends: one run per tick")
	return minHold, tick
}

// checkHold validates --min-hold and --tick (given as minHold and tick)
// and sets them in f. Both hold a plain lease on KEY: neither combines
// with --slots, --read or --write.
func (f *runFlags) checkHold(fs *flag.FlagSet, minHold, tick time.Duration) error {
	given := flagGiven(fs, "min-hold")
	switch {
	case given && (minHold <= 0 || minHold > leasehold.MaxTTL):
		return usagef("--min-hold %s is outside (0, %s]: give a positive duration such as 30s or 1h", minHold, leasehold.MaxTTL)
	case flagGiven(fs, "tick") && (tick < minTick || tick > maxTick):
		return usagef("--tick %s is outside [%s, %s]: give the schedule's period, such as 1m or 1h", tick, minTick, maxTick)
	case (minHold > 0 || tick > 0) && (f.slots != 0 || f.mode != 0):
		return usagef("--min-hold and --tick hold a plain lease on KEY: they do not combine with --slots, --read or --write")
	}
	f.minHold, f.tick = minHold, tick
	if tick > 0 {
		// The tick's key is KEY and a suffix: refuse a KEY that the
		// suffix makes too long now, not once the store is open.
		return leasehold.ValidateKey(leasehold.TickKey(f.key, time.Now(), tick))
	}
	return nil
}

// holdPlan is how run acquires a plain lease with --min-hold or --tick.
type holdPlan struct {
	key  string
	opts leasehold.AcquireOptions
	tick time.Time // with --tick: the tick the key names
	end  time.Time // with --tick: when the tick ends (zero without --tick)
}

// planHold returns the plan of f's plain lease for an acquire made at now.
// With --tick, the key is leasehold.TickKey(KEY, now, tick): the tick
// nearest now, which runs from half a period before it to half a period
// after (its end). The lease is held until that end (--min-hold, if
// given, sets the hold instead) and a --wait ends by then: a run that
// gets the key within the tick takes it over from a holder that crashed
// or was stopped, while one after the tick's end would run it twice.
func (f runFlags) planHold(now time.Time) holdPlan {
	p := holdPlan{key: f.key, opts: leasehold.AcquireOptions{TTL: f.ttl, Wait: f.wait, MinHold: f.minHold}}
	if f.tick <= 0 {
		return p
	}
	p.tick = now.Round(f.tick)
	p.end = p.tick.Add(f.tick / 2)
	p.key = leasehold.TickKey(f.key, now, f.tick)
	left := p.end.Sub(now)
	if f.minHold == 0 {
		// The hold is counted from the grant, a little after now: it
		// lasts to the tick's end at least (run frees it then).
		p.opts.MinHold = min(left, leasehold.MaxTTL)
	}
	if p.opts.Wait > left {
		p.opts.Wait = left
	}
	return p
}

// holdEnd is when run frees a lease acquired by plan p, granted (reaching
// run) at got: the tick's end, or --min-hold after the grant.
func (p holdPlan) holdEnd(f runFlags, got time.Time) time.Time {
	switch {
	case f.minHold > 0:
		return got.Add(f.minHold)
	case !p.end.IsZero():
		return minTime(p.end, got.Add(p.opts.MinHold)) // a tick longer than 2 x MaxTTL: the capped hold
	}
	return time.Time{}
}

// minTime returns the earlier of a and b.
func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

// holdOn keeps h's lease held, after its command exited with code, until
// h.holdEnd, and returns run's exit status: code, or 128+N if signal N
// ends the hold early (the lease is then freed at once, by close). The
// client renews the lease meanwhile. A lease lost while the command ran is
// not held on, nor one whose command could not be started (not found, not
// executable): the job did not run, another node may run it.
func (a *app) holdOn(f runFlags, h *held, code int, sigs <-chan os.Signal) int {
	if h.holdEnd.IsZero() || !h.started || h.lease.Release(context.Background()) != nil {
		return code
	}
	left := time.Until(h.holdEnd)
	if left <= 0 {
		return code
	}
	why := "--min-hold " + f.minHold.String()
	if f.minHold == 0 {
		why = "the end of its --tick " + f.tick.String()
	}
	if !a.jsonErrors {
		fmt.Fprintf(a.stderr, "leasehold %s: the command exited %d; holding %q until %s (%s)\n", f.name, code,
			h.lease.Key(), h.holdEnd.UTC().Format(time.RFC3339), why)
	}
	t := time.NewTimer(left)
	defer t.Stop()
	select {
	case <-t.C:
		return code
	case s := <-sigs:
		return a.fail(f.name, fmt.Errorf("%w while holding %q until %s (%s): released early; the command had exited %d",
			&interrupted{sig: s}, h.lease.Key(), h.holdEnd.UTC().Format(time.RFC3339), why, code))
	}
}
