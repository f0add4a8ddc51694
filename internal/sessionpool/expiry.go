package sessionpool

import "time"

// The lower bound of the session's end on the server (an etcd lease's
// expiry, a Consul session's invalidation), moved by each keepalive by the
// keepalive's send time, never its reply's arrival.

// ttlFromLocked returns the TTL a grant acquired or renewed by a request
// sent at t0 can count on: the class, or less if the session's known end
// is nearer (keepalives failing). Caller holds Mu.
func (c *Core[K, G, O]) ttlFromLocked(t0 time.Time) time.Duration {
	if rem := c.expiry.Sub(t0); rem < c.cfg.Class {
		return rem
	}
	return c.cfg.Class
}

// Extend moves the session's end lower bound to exp, the send time of a
// keepalive the server answered plus the TTL it can count on, if that is
// later.
func (c *Core[K, G, O]) Extend(exp time.Time) {
	c.Mu.Lock()
	defer c.Mu.Unlock()
	if exp.After(c.expiry) {
		c.expiry = exp
	}
}

// Expiry returns the session's end lower bound.
func (c *Core[K, G, O]) Expiry() time.Time {
	c.Mu.Lock()
	defer c.Mu.Unlock()
	return c.expiry
}

// Covers reports whether the session's end lower bound is at least a
// class's TTL after t0: a grant made or renewed by a request sent at t0 can
// count on the class.
func (c *Core[K, G, O]) Covers(t0 time.Time) bool {
	c.Mu.Lock()
	defer c.Mu.Unlock()
	return c.ttlFromLocked(t0) >= c.cfg.Class
}

// ExpiredAt reports whether the session's end lower bound has passed at
// now.
func (c *Core[K, G, O]) ExpiredAt(now time.Time) bool {
	c.Mu.Lock()
	defer c.Mu.Unlock()
	return !now.Before(c.expiry)
}

// Fresh returns the send time t0 for a request on the session, first
// calling refresh (one keepalive sent at t0, which calls Extend on success)
// if the session's end is known less than a class's TTL after t0
// (keepalives late or failing), so that a grant made or renewed by a
// request sent at t0 can count on the class. It returns refresh's error,
// or overdue() if the keepalive did not move the end far enough.
func (c *Core[K, G, O]) Fresh(refresh func(t0 time.Time) error, overdue func() error) (time.Time, error) {
	t0 := time.Now()
	if c.Covers(t0) {
		return t0, nil
	}
	if err := refresh(t0); err != nil {
		return t0, err
	}
	if !c.Covers(t0) {
		return t0, overdue()
	}
	return t0, nil
}

// Outcome is the outcome of one keepalive.
type Outcome int

// The outcomes of a keepalive.
const (
	KeepOK      Outcome = iota // the server extended the session (the keepalive called Extend)
	KeepFailed                 // no answer, or an error
	KeepGone                   // the server answered that the session does not exist
	KeepStopped                // the session is ending
)

// KeepAlive is a session's keepalive loop, from t0, the send time of the
// request that made it: it calls once every interval, or sooner after a
// failure (from an eighth of the interval, at most 100 ms, doubling up to
// half the interval), until Stop closes. When once reports the session
// gone it calls gone and returns; when failures let the end lower bound
// pass, it calls expired and returns.
func (c *Core[K, G, O]) KeepAlive(t0 time.Time, interval time.Duration, once func() Outcome, gone, expired func()) {
	first := min(interval/8, 100*time.Millisecond)
	retry := first
	next := t0.Add(interval)
	timer := time.NewTimer(time.Until(next))
	defer timer.Stop()
	for {
		select {
		case <-c.stop:
			return
		case <-timer.C:
		}
		res := once()
		switch res {
		case KeepStopped:
			return
		case KeepGone:
			gone()
			return
		}
		now := time.Now()
		if res == KeepOK {
			next = now.Add(interval)
			retry = first
		} else {
			if c.ExpiredAt(now) {
				expired()
				return
			}
			next = now.Add(retry)
			retry = min(2*retry, interval/2)
		}
		timer.Reset(time.Until(next))
	}
}
