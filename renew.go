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
	rctx, rcancel := context.WithCancel(context.Background())
	defer rcancel()
	t := &runTimers{clock: l.c.opts.Clock, batched: batched}
	t.deadline = t.clock.NewTimer(l.Deadline().Sub(t.clock.Now()))
	defer t.stop()
	interval := time.Duration(float64(l.ttl) * l.c.opts.RenewFraction)
	t.schedule(jitter(interval, renewJitter))
	failures := 0
	for {
		select {
		case <-l.stop:
			return
		case <-l.grant.Lost:
			l.lose(fmt.Errorf("%w: the store reported the grant gone", ErrNotHeld))
			return
		case <-t.deadline.C():
			l.lose(ErrExpired)
			return
		case <-t.renewC:
			t.renewC = nil
			go l.renewOnce(rctx)
		case r := <-l.results:
			switch {
			case r.err == nil:
				failures = 0
				t.resetDeadline(l.extend(r.sent))
				t.schedule(jitter(interval, renewJitter))
			case errors.Is(r.err, ErrNotHeld):
				l.lose(r.err)
				return
			default:
				failures++
				l.jeopardy(r, failures, t)
			}
		}
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
// unless the whole batch failed (the batch group retries that).
func (l *Lease) jeopardy(r renewResult, failures int, t *runTimers) {
	o := &l.c.opts
	left := l.Remaining()
	if o.OnJeopardy != nil {
		// On its own goroutine: a callback that blocks (or calls Release)
		// must never delay the deadline.
		go o.OnJeopardy(Jeopardy{Key: l.grant.Key, Token: l.grant.Token, Remaining: left, Err: r.err})
	}
	d := min(o.Backoff.Delay(failures), max(left/4, time.Millisecond))
	if r.wholeBatch {
		t.schedule(d)
	} else {
		t.retry(d)
	}
}

// runTimers are run's two timers: the holder's deadline and the lease's
// own next renewal.
type runTimers struct {
	clock    Clock
	batched  bool // a batch group schedules the renewals
	deadline Timer
	renewT   Timer
	renewC   <-chan time.Time
}

// retry schedules this lease's own renewal in d.
func (t *runTimers) retry(d time.Duration) {
	if t.renewT != nil {
		t.renewT.Stop()
	}
	t.renewT = t.clock.NewTimer(d)
	t.renewC = t.renewT.C()
}

// schedule schedules the next renewal in d, for a lease that no batch group
// renews.
func (t *runTimers) schedule(d time.Duration) {
	if !t.batched {
		t.retry(d)
	}
}

func (t *runTimers) resetDeadline(at time.Time) {
	t.deadline.Stop()
	t.deadline = t.clock.NewTimer(at.Sub(t.clock.Now()))
}

func (t *runTimers) stop() {
	t.deadline.Stop()
	if t.renewT != nil {
		t.renewT.Stop()
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
