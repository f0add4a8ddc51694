package leasehold

import (
	"math/rand/v2"
	"time"
)

// Backoff decides how long a waiter sleeps before its next acquire attempt
// (and how soon a failed renewal is retried). Strategies compose: wrap one in
// another to cap or shift it.
type Backoff interface {
	// Delay returns the pause before attempt n (n >= 1 is the first retry).
	Delay(n int) time.Duration
}

// ExpBackoff is capped exponential backoff with full jitter: attempt n sleeps
// a uniformly random duration in [0, min(Cap, Base*2^(n-1))). Full jitter
// spreads waiters that lost at the same moment, so a release does not wake a
// herd. The zero value means Base 10ms, Cap 1s.
type ExpBackoff struct {
	Base, Cap time.Duration
}

// Delay implements Backoff.
func (b ExpBackoff) Delay(n int) time.Duration {
	base, ceil := b.Base, b.Cap
	if base <= 0 {
		base = 10 * time.Millisecond
	}
	if ceil <= 0 {
		ceil = time.Second
	}
	d := ceil
	if n < 1 {
		n = 1
	}
	if n < 40 {
		if e := base << (n - 1); e > 0 && e < ceil {
			d = e
		}
	}
	return time.Duration(rand.Int64N(int64(d)) + 1)
}

// ConstBackoff sleeps the same duration before every attempt.
type ConstBackoff time.Duration

// Delay implements Backoff.
func (b ConstBackoff) Delay(int) time.Duration { return time.Duration(b) }

// jitter returns d scaled by a random factor in [1-f, 1+f).
func jitter(d time.Duration, f float64) time.Duration {
	return time.Duration(float64(d) * (1 - f + 2*f*rand.Float64()))
}
