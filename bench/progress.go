package bench

import (
	"fmt"
	"time"
)

// Progress reports how far a measurement has got. It is passed to the
// Progress callbacks of the options, from a goroutine of the measurement.
type Progress struct {
	Store   string
	Clients int           // clients, waiters or held leases, as Phase says
	Phase   string        // "cycles", "handoff", "fill", "probe", "herd" or "release"
	Elapsed time.Duration // time spent in the phase
	Total   time.Duration // the phase's planned length, 0 if it has none
	Done    int64         // cycles, leases or hand-offs done in the phase
	Target  int64         // the phase's planned count, 0 if it has none
	Errors  int64         // errors so far
}

// String describes p in one line, for a progress display: for example
// "redis, 8 clients: 2s of 10s, 12,345 cycles, 3 errors".
func (p Progress) String() string {
	el := p.Elapsed.Round(100 * time.Millisecond)
	errs := ""
	if p.Errors > 0 {
		errs = fmt.Sprintf(", %d errors", p.Errors)
	}
	switch p.Phase {
	case "cycles":
		return fmt.Sprintf("%s, %d clients: %s of %s, %s cycles%s", p.Store, p.Clients, el, p.Total, fmtInt(p.Done), errs)
	case "handoff":
		return fmt.Sprintf("%s, %d clients: hand-off %d of %d%s", p.Store, p.Clients, p.Done, p.Target, errs)
	case "fill":
		return fmt.Sprintf("%s: acquiring leases to hold: %s of %s (%s)%s", p.Store, fmtInt(p.Done), fmtInt(p.Target), el, errs)
	case "probe":
		return fmt.Sprintf("%s: timing cycles with %s leases held%s", p.Store, fmtInt(int64(p.Clients)), errs)
	case "release":
		return fmt.Sprintf("%s: releasing held leases: %s of %s%s", p.Store, fmtInt(p.Done), fmtInt(p.Target), errs)
	case "herd":
		return fmt.Sprintf("%s, %d waiters: %d of %d hand-offs (%s)%s", p.Store, p.Clients, p.Done, p.Target, el, errs)
	}
	return fmt.Sprintf("%s: %s %s", p.Store, p.Phase, el)
}
