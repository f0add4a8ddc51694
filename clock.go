package leasehold

import "time"

// Clock is the holder's clock. The client reads it before sending each
// acquire or renew and times renewals and deadlines with it. Tests and the
// fault harness inject a clock that runs fast or slow to model clock-rate
// error; the zero Options use the system's monotonic clock.
type Clock interface {
	Now() time.Time
	NewTimer(d time.Duration) Timer
}

// Timer is the part of *time.Timer a Clock must provide.
type Timer interface {
	C() <-chan time.Time
	Stop() bool
}

// SystemClock returns the process's monotonic clock.
func SystemClock() Clock { return systemClock{} }

type systemClock struct{}

func (systemClock) Now() time.Time                 { return time.Now() }
func (systemClock) NewTimer(d time.Duration) Timer { return sysTimer{time.NewTimer(d)} }

type sysTimer struct{ t *time.Timer }

func (t sysTimer) C() <-chan time.Time { return t.t.C }
func (t sysTimer) Stop() bool          { return t.t.Stop() }
