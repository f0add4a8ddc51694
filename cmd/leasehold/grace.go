package main

import (
	"fmt"
	"time"

	"github.com/leasehold-go/leasehold"
)

// defaultGrace is --grace when the flag is not given, capped by maxGrace.
const defaultGrace = 10 * time.Second

// maxGrace is the longest --grace that ttl allows. run starts terminating
// the command when the time left before the holder's deadline falls to the
// grace, so that SIGKILL lands at the deadline, before the store can grant
// the key to anyone else. Terminating must not start before renewals have
// had a fair chance: the first renewal starts at most 1.1 x TTL/3 after the
// grant (the interval plus its jitter), and the client gives each attempt
// half the time left, so a hung first attempt and a second one end by
// first + left/2 + left/4, with left = HoldFor(ttl) - first. The grace is
// what remains: left/4 (about TTL/6).
func maxGrace(ttl time.Duration) time.Duration {
	var o leasehold.Options // run's client keeps the default Rho, Margin and RenewFraction
	return (o.HoldFor(ttl) - o.FirstRenewal(ttl)) / 4
}

// checkGrace validates --grace against the TTL; given reports whether the
// flag was set. It returns the grace to use: the default is
// min(defaultGrace, maxGrace(ttl)).
func checkGrace(grace, ttl time.Duration, given bool) (time.Duration, error) {
	limit := maxGrace(ttl)
	if limit < 0 {
		return 0, fmt.Errorf("%w: --ttl %s is too short for run: renewals would leave no time to stop the command before the holder's deadline", leasehold.ErrInvalidTTL, ttl)
	}
	if !given {
		return min(defaultGrace, limit), nil
	}
	if grace < 0 {
		return 0, usagef("--grace %s is negative", grace)
	}
	if grace > limit {
		return 0, usagef("--grace %s is longer than --ttl %s allows (at most %s): the command's process group must be dead by the holder's deadline, so SIGTERM goes out --grace before it, and that must leave time for the first renewal and a retry to end first; use a shorter --grace or a longer --ttl (about 6.5 x grace)",
			grace, ttl, limit.Truncate(time.Millisecond))
	}
	return grace, nil
}
