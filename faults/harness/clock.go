package harness

import (
	"time"

	"github.com/leasehold-go/leasehold"
)

// RateClock is a leasehold.Clock that runs at Rate times the speed of the
// real monotonic clock: a Rate below 1 is a slow clock (the holder believes
// less time has passed than has), above 1 a fast one. It models a holder
// whose clock rate differs from the store's by more or less than the
// client's Options.Rho.
type RateClock struct {
	rate float64
	base time.Time
}

// NewRateClock returns a clock running at rate (> 0) from now on.
func NewRateClock(rate float64) *RateClock {
	if rate <= 0 {
		panic("faults: clock rate must be positive")
	}
	return &RateClock{rate: rate, base: time.Now()}
}

// Now returns base + elapsed x rate.
func (c *RateClock) Now() time.Time {
	return c.base.Add(time.Duration(float64(time.Since(c.base)) * c.rate))
}

// NewTimer returns a timer that fires when d has passed on this clock, that
// is after d / rate of real time.
func (c *RateClock) NewTimer(d time.Duration) leasehold.Timer {
	return rateTimer{time.NewTimer(time.Duration(float64(d) / c.rate))}
}

type rateTimer struct{ t *time.Timer }

// C implements leasehold.Timer.
func (t rateTimer) C() <-chan time.Time { return t.t.C }

// Stop implements leasehold.Timer.
func (t rateTimer) Stop() bool { return t.t.Stop() }
