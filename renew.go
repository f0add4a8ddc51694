package leasehold

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// The lease's lifecycle on the client's scheduler (sched.go): its deadline
// event ends it, its renew event starts its own renewal (unless a batch
// group renews it, when the event is used for its own retries only), and
// each renewal's result moves the deadline, ends the lease or schedules a
// retry. All of it runs under c.mu.

type renewResult struct {
	sent time.Time
	took time.Duration // the store call's time
	err  error
	// wholeBatch: err is the failure of a whole batch call, which the
	// batch group retries itself; a failure of this grant alone is
	// retried by the lease on its own.
	wholeBatch bool
}

// interval is the time between renewals of l, before jitter.
func (l *Lease) interval() time.Duration {
	return time.Duration(float64(l.ttl) * l.c.opts.RenewFraction)
}

// schedule registers a lease that start has made: its deadline, its first
// renewal (or its batch group's), and the watch on its grant's Lost
// channel. c.mu must be held.
func (c *Client) schedule(l *Lease) {
	c.leases[l] = struct{}{}
	l.dl = event{kind: evDeadline, l: l}
	l.rn = event{kind: evRenew, l: l}
	c.at(&l.dl, l.deadline)
	if !c.join(l) {
		c.renewIn(&l.rn, l.interval())
	}
	c.watch(l)
}

// end ends l, lost for reason: it cancels l's context with a *LostError,
// stops its scheduling and frees the store's side in the background (best
// effort). c.mu must be held, so that Release sees either a lease it
// halts or one already lost.
func (c *Client) end(l *Lease, reason error) {
	if l.halted {
		return
	}
	lost := &LostError{Key: l.grant.Key, Token: l.grant.Token, Reason: reason}
	if o := c.opts.Observer; o != nil {
		// Before the cancel: whoever sees the lease's context end can
		// count on the observer having seen the loss.
		o.Observe(Event{Context: l.Context(), Kind: EventLost, Key: l.grant.Key, Token: l.grant.Token, Err: lost, Held: c.opts.Clock.Now().Sub(l.sent)})
	}
	l.end(lost)
	c.halt(l)
	c.bg.Go(func() { _ = l.storeRelease(context.Background()) })
}

// halt stops everything the scheduler does for l: its events, its renewal
// in flight, its batch group and Lost watch; l is forgotten. c.mu must be
// held.
func (c *Client) halt(l *Lease) {
	if l.halted {
		return
	}
	l.halted = true
	c.unschedule(&l.dl)
	c.unschedule(&l.rn)
	if l.fr != nil {
		c.unschedule(l.fr)
	}
	if l.rcancel != nil {
		l.rcancel()
		l.rcancel = nil
	}
	delete(c.leases, l)
	c.leave(l)
	c.unwatch(l)
}

// renewAlone starts l's own renewal on a goroutine of its own. The attempt
// may take half the time left, so that a hung connection leaves room for at
// least one more attempt before the deadline. c.mu must be held.
func (c *Client) renewAlone(l *Lease) {
	sent := c.opts.Clock.Now()
	left := l.Deadline().Sub(sent)
	if left <= 0 {
		// The scheduler ran late and the deadline has passed: a renewal
		// sent now could extend a lease the holder no longer owns.
		c.end(l, ErrExpired)
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), attemptTimeout(left))
	l.rcancel = cancel
	l.rgen++
	gen := l.rgen
	go func() {
		defer cancel()
		_, err := c.store.Renew(ctx, l.grant)
		took := c.opts.Clock.Now().Sub(sent)
		c.mu.Lock()
		defer c.mu.Unlock()
		if l.rgen == gen {
			l.rcancel = nil // no later renewal of its own has started
		}
		c.settle(l, renewResult{sent: sent, took: took, err: err})
	}()
}

// attemptTimeout bounds one renewal attempt made with left before the
// deadline: half of it, so that at least two attempts fit.
func attemptTimeout(left time.Duration) time.Duration {
	return max(left/2, time.Millisecond)
}

// settle applies a renewal's result to l; a result that arrives after l
// has ended is dropped. c.mu must be held.
func (c *Client) settle(l *Lease, r renewResult) {
	if l.halted {
		return
	}
	if o := c.opts.Observer; o != nil {
		e := Event{Context: l.Context(), Kind: EventRenew, Key: l.grant.Key, Token: l.grant.Token, Err: r.err, Latency: r.took}
		if r.err != nil {
			e.Remaining = l.Remaining()
		}
		o.Observe(e)
	}
	switch {
	case r.err == nil:
		l.failures = 0
		l.extend(r.sent) // the deadline event follows when it comes due (fire)
		if l.group == nil {
			c.renewIn(&l.rn, l.interval())
		} else {
			c.unschedule(&l.rn) // the batch renewed it: no retry of its own
		}
	case errors.Is(r.err, ErrNotHeld):
		c.end(l, r.err)
	default:
		l.failures++
		c.jeopardy(l, r)
	}
}

// extend moves the holder's deadline to sent + HoldFor(TTL) after a
// renewal sent at sent succeeded, and returns the deadline.
func (l *Lease) extend(sent time.Time) time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	if d := sent.Add(l.c.opts.HoldFor(l.ttl)); d.After(l.deadline) {
		l.deadline = d
	}
	return l.deadline
}

// jeopardy handles a renewal that failed ambiguously or transiently: not
// extended, not lost. It retries until the deadline settles it: on its own,
// unless the whole batch failed (the batch group retries that). c.mu must
// be held.
func (c *Client) jeopardy(l *Lease, r renewResult) {
	o := &c.opts
	left := l.Remaining()
	if o.OnJeopardy != nil {
		// On its own goroutine: a callback that blocks (or calls Release)
		// must never delay the deadline.
		go o.OnJeopardy(Jeopardy{Key: l.grant.Key, Token: l.grant.Token, Remaining: left, Err: r.err})
	}
	if r.wholeBatch && l.group != nil {
		return
	}
	c.in(&l.rn, min(o.Backoff.Delay(l.failures), max(left/4, time.Millisecond)))
}

// lostWatch watches one Grant.Lost channel for the leases whose grants
// carry it (an etcd session's is shared by all its grants).
type lostWatch struct {
	leases map[*Lease]struct{}
	stop   chan struct{}
}

// watch ends l when its grant's Lost channel closes. Each distinct channel
// has one goroutine. A watch left without leases lingers, so that a client
// acquiring and releasing in a loop does not start a goroutine per lease
// (the grants of one store session share its channel): the idle ones are
// stopped when another channel needs a watch, and when the scheduler's
// goroutine exits (no lease held for loopLinger, or Close). c.mu must be
// held.
func (c *Client) watch(l *Lease) {
	ch := l.grant.Lost
	if ch == nil {
		return
	}
	w := c.watches[ch]
	if w == nil {
		c.stopIdleWatches()
		w = &lostWatch{leases: make(map[*Lease]struct{}), stop: make(chan struct{})}
		c.watches[ch] = w
		go c.watchLost(ch, w)
	}
	w.leases[l] = struct{}{}
}

// unwatch drops l from its Lost watch. c.mu must be held.
func (c *Client) unwatch(l *Lease) {
	if ch := l.grant.Lost; ch != nil {
		if w := c.watches[ch]; w != nil {
			delete(w.leases, l)
		}
	}
}

// stopIdleWatches stops the Lost watches no lease uses. c.mu must be held.
func (c *Client) stopIdleWatches() {
	for ch, w := range c.watches {
		if len(w.leases) == 0 {
			close(w.stop)
			delete(c.watches, ch)
		}
	}
}

func (c *Client) watchLost(ch <-chan struct{}, w *lostWatch) {
	select {
	case <-w.stop:
		return
	case <-ch:
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.watches[ch] == w {
		// A later lease whose grant carries ch gets a watch of its own,
		// which ends it at once.
		delete(c.watches, ch)
	}
	for l := range w.leases {
		reason := fmt.Errorf("%w: the store reported the grant gone", ErrNotHeld)
		if le, ok := c.store.(LostExplainer); ok {
			if why := le.LostReason(l.grant); why != nil {
				reason = fmt.Errorf("%w: the store reported the grant gone: %w", ErrNotHeld, why)
			}
		}
		c.end(l, reason)
	}
}
