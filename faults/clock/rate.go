// Package clock holds the fault harness's clock faults: Rate, a
// leasehold.Clock running faster or slower than real time, which a holder
// process uses for F12 and F12b (the slow holder clock); the step of a
// store server's wall clock for F11 (Probe, WriteShift): libfaketime, or
// the harness's own LD_PRELOAD library, clockshift, compiled at run time;
// and the step of a Go holder's own wall clock for F17 (BuildShifted,
// Observed, GoShiftEnv): the holder built with a patched time package.
package clock

import (
	"time"

	"github.com/leasehold-go/leasehold"
)

// Rate is a leasehold.Clock that runs at Rate times the speed of the
// real monotonic clock: a Rate below 1 is a slow clock (the holder believes
// less time has passed than has), above 1 a fast one. It models a holder
// whose clock rate differs from the store's by more or less than the
// client's Options.Rho.
type Rate struct {
	rate float64
	base time.Time
}

// NewRate returns a clock running at rate (> 0) from now on.
func NewRate(rate float64) *Rate {
	if rate <= 0 {
		panic("faults: clock rate must be positive")
	}
	return &Rate{rate: rate, base: time.Now()}
}

// Now returns base + elapsed x rate.
func (c *Rate) Now() time.Time {
	return c.base.Add(time.Duration(float64(time.Since(c.base)) * c.rate))
}

// NewTimer returns a timer that fires when d has passed on this clock, that
// is after d / rate of real time.
func (c *Rate) NewTimer(d time.Duration) leasehold.Timer {
	return rateTimer{time.NewTimer(time.Duration(float64(d) / c.rate))}
}

type rateTimer struct{ t *time.Timer }

// C implements leasehold.Timer.
func (t rateTimer) C() <-chan time.Time { return t.t.C }

// Stop implements leasehold.Timer.
func (t rateTimer) Stop() bool { return t.t.Stop() }
