package leasehold

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// run is the lease's one goroutine: it renews (unless a batch group does),
// enforces the holder-side deadline and watches the store's loss signal.
func (l *Lease) run(batched bool) {
	defer close(l.exited)
	defer l.c.forget(l)
	o := &l.c.opts
	rctx, rcancel := context.WithCancel(context.Background())
	defer rcancel()

	deadline := o.Clock.NewTimer(l.Deadline().Sub(o.Clock.Now()))
	defer func() { deadline.Stop() }()
	var renewC <-chan time.Time
	var renewT Timer
	// retry schedules this lease's own renewal in d; schedule does so only
	// for a lease that no batch group renews.
	retry := func(d time.Duration) {
		if renewT != nil {
			renewT.Stop()
		}
		renewT = o.Clock.NewTimer(d)
		renewC = renewT.C()
	}
	schedule := func(d time.Duration) {
		if !batched {
			retry(d)
		}
	}
	defer func() {
		if renewT != nil {
			renewT.Stop()
		}
	}()
	interval := time.Duration(float64(l.ttl) * o.RenewFraction)
	schedule(jitter(interval, renewJitter))
	failures := 0

	for {
		select {
		case <-l.stop:
			return
		case <-l.grant.Lost:
			l.lose(fmt.Errorf("%w: the store reported the grant gone", ErrNotHeld))
			return
		case <-deadline.C():
			l.lose(ErrExpired)
			return
		case <-renewC:
			renewC = nil
			go l.renewOnce(rctx)
		case r := <-l.results:
			switch {
			case r.err == nil:
				failures = 0
				l.mu.Lock()
				if d := r.sent.Add(o.HoldFor(l.ttl)); d.After(l.deadline) {
					l.deadline = d
				}
				next := l.deadline
				l.mu.Unlock()
				deadline.Stop()
				deadline = o.Clock.NewTimer(next.Sub(o.Clock.Now()))
				schedule(jitter(interval, renewJitter))
			case errors.Is(r.err, ErrNotHeld):
				l.lose(r.err)
				return
			default:
				// Ambiguous or transient: not extended, not lost. Retry
				// until the deadline settles it: on its own, unless the
				// whole batch failed (the batch group retries that).
				failures++
				left := l.Remaining()
				if o.OnJeopardy != nil {
					// On its own goroutine: a callback that blocks (or
					// calls Release) must never delay the deadline.
					go o.OnJeopardy(Jeopardy{Key: l.grant.Key, Token: l.grant.Token, Remaining: left, Err: r.err})
				}
				d := min(o.Backoff.Delay(failures), max(left/4, time.Millisecond))
				if r.wholeBatch {
					schedule(d)
				} else {
					retry(d)
				}
			}
		}
	}
}

// renewOnce sends one renewal and reports the result to run. The attempt
// may take half the time left, so that a hung connection leaves room for at
// least one more attempt before the deadline.
func (l *Lease) renewOnce(ctx context.Context) {
	o := &l.c.opts
	sent := o.Clock.Now()
	ctx, cancel := context.WithTimeout(ctx, attemptTimeout(l.Deadline().Sub(sent)))
	defer cancel()
	_, err := l.c.store.Renew(ctx, l.grant)
	l.deliver(renewResult{sent: sent, err: err})
}

// attemptTimeout bounds one renewal attempt made with left before the
// deadline: half of it, so that at least two attempts fit.
func attemptTimeout(left time.Duration) time.Duration {
	return max(left/2, time.Millisecond)
}

// deliver hands a renewal result to run, unless the lease has ended.
func (l *Lease) deliver(r renewResult) {
	select {
	case l.results <- r:
	case <-l.ctx.Done(): // ended: run is releasing or gone, the result is moot
	case <-l.exited:
	}
}

// forget drops l from the client's bookkeeping (and its batch group).
func (c *Client) forget(l *Lease) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.leases, l)
	c.leave(l)
}
