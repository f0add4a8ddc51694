package consul

import (
	"math"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// serverClock is the store's estimate of the Consul agent's clock, a lower
// bound of it: the latest Date header seen on the store's HTTP responses,
// advanced by the local monotonic clock since that response arrived. A
// Date header is whole seconds, truncated, and is written before the
// response is received, so at the instant of receipt the agent's clock is
// at or past it; later observations only raise the estimate (a second's
// tick seen in a Date tightens it to within a round trip). It never goes
// back, even if the agent's clock steps back: the estimate is a floor for
// tokens, not a time to compare deadlines with.
//
// A Store made by New on a client of the caller's sees no headers: its
// estimate is the local wall clock (see the package doc).
type serverClock struct {
	mu   sync.Mutex
	base time.Time // a lower bound of the agent's time at the local instant at
	at   time.Time // with a monotonic reading
	seen bool
}

// observe records a response's Date header, received at the local instant at.
func (c *serverClock) observe(h http.Header, at time.Time) {
	d, err := http.ParseTime(h.Get("Date"))
	if err != nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.seen || d.After(c.base.Add(at.Sub(c.at))) {
		c.base, c.at, c.seen = d, at, true
	}
}

// micros returns the estimate now, in microseconds since 1970 (0 before
// 1970), and whether it comes from the agent's headers (false: the local
// wall clock).
func (c *serverClock) micros() (uint64, bool) {
	c.mu.Lock()
	t, seen := c.base.Add(time.Since(c.at)), c.seen
	c.mu.Unlock()
	if !seen {
		t = time.Now()
	}
	return unixMicros(t), seen
}

// unixMicros is t in microseconds since 1970, 0 before.
func unixMicros(t time.Time) uint64 {
	if us := t.UnixMicro(); us > 0 {
		return uint64(us)
	}
	return 0
}

// dateTap is the RoundTripper of OpenURL's client: it feeds every
// response's Date header to the store's clock.
type dateTap struct {
	next  http.RoundTripper
	clock *serverClock
}

// RoundTrip implements http.RoundTripper.
func (d dateTap) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := d.next.RoundTrip(r)
	if err == nil {
		d.clock.observe(resp.Header, time.Now())
	}
	return resp, err
}

// highWater is the highest token a Store has granted: a floor for its next
// tokens, of every key, that survives the cluster's loss of its data for as
// long as the Store runs. Tokens more than highSlack ahead of the clock
// estimate (a key whose planted or corrupted value holds a huge token) do
// not raise it, so that one such key cannot push every other key's tokens
// to their limit.
type highWater struct{ v atomic.Uint64 }

// highSlack is how far ahead of the clock estimate a token may be and still
// raise a store's high-water mark: an hour of microseconds.
const highSlack = uint64(time.Hour / time.Microsecond)

// see raises the mark to t, unless t is more than highSlack ahead of c.
func (h *highWater) see(t uint64, c *serverClock) {
	if now, _ := c.micros(); t > now && t-now > highSlack {
		return
	}
	for {
		cur := h.v.Load()
		if t <= cur || h.v.CompareAndSwap(cur, t) {
			return
		}
	}
}

// nextToken returns the token for a new grant of an entry whose token was
// prev (0: no entry, or none known), floored by the clock estimate now (µs)
// and the store's high-water mark hw: max(prev+1, hw+1, now). ok is false if
// prev or hw is already the largest token (the token would wrap).
func nextToken(prev, hw, now uint64) (uint64, bool) {
	top := max(prev, hw)
	if top == math.MaxUint64 {
		return 0, false
	}
	return max(top+1, now), true
}
