package leasehold

import "time"

// TickKey keys a lease by a schedule's tick: base, a slash and the tick
// nearest t, a multiple of period counted from the zero time, written in
// UTC as RFC 3339 with nanoseconds ("jobs/report/2026-11-27T15:00:00Z").
// Every node that computes it for the same tick gets the same key, whatever
// its time zone, and nodes whose clocks (or schedulers) differ by less than
// period/2 agree, because t is rounded to the nearest tick rather than
// truncated (a node a little early for 15:00 still keys 15:00). Ticks of a
// period that divides a day fall on UTC midnight and its multiples.
//
// Acquire the key with AcquireOptions.MinHold of about the period (less
// than a period, more than the nodes' skew) and release it when the job
// returns: a job scheduled on every node then runs once per tick, however
// short it is. A period of zero or less keys t itself, to the nanosecond.
func TickKey(base string, t time.Time, period time.Duration) string {
	if period > 0 {
		t = t.Round(period)
	}
	return base + "/" + t.UTC().Format(time.RFC3339Nano)
}
