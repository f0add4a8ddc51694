package leasehold

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/leasehold-go/leasehold/fence"
)

// Lease is a held lease. Its Context is cancelled, with a cause, the moment
// ownership ends: released (ErrReleased), refused on renewal or reported gone
// by the store (*LostError wrapping ErrNotHeld), or the holder-side deadline
// passed without a successful renewal (*LostError wrapping ErrExpired).
// The context carries the fencing token for fence.TokenFrom and
// fence.RoundTripper.
type Lease struct {
	c     *Client
	ttl   time.Duration
	grant Grant // immutable after start

	// values is the acquire's context without its cancellation: the
	// lease's context derives from it. That context is made on first use
	// (Context, Done, an observer's event), so that a lease acquired and
	// released without it costs none of its allocations.
	values context.Context
	sent   time.Time   // when the acquire that was granted was sent
	made   atomic.Bool // ctx and cancel are set

	mu       sync.Mutex
	ctx      context.Context         // guarded by mu until made
	cancel   context.CancelCauseFunc // guarded by mu
	cause    error                   // why the lease ended; nil while held. Guarded by mu
	deadline time.Time
	released bool // store.Release has been called

	// holdUntil is when a lease acquired with a MinHold may be freed in
	// the store (zero without one); immutable after start.
	holdUntil time.Time

	// The client's scheduler state for the lease, guarded by c.mu.
	dl, rn   event              // the deadline; the next renewal or retry of its own
	fr       *event             // the end of a released lease's MinHold (minhold.go); nil unless kept
	kept     bool               // released, but kept in the store until holdUntil
	failures int                // consecutive failed renewals
	halted   bool               // ended or released: nothing more is scheduled
	group    *batchGroup        // the batch group renewing it, if any
	rcancel  context.CancelFunc // cancels its own renewal in flight
	rgen     uint32             // counts its own renewals, to match rcancel

	releaseOnce sync.Once
	releaseErr  error
}

// start turns a grant, sent at a.sent, into a held lease. It reports the
// grant (EventAcquire, set *reported) before it schedules the lease, while
// nothing can end it yet: not Close (which finds only scheduled leases),
// the scheduler's deadline or renewal, nor a store's loss watch. So the
// lease's EventLost or EventRelease always follows its EventAcquire. When
// it refuses the grant (late, or the client closed before the report) it
// releases it, reports nothing and returns the error for the caller to
// report; when the client closed during the report it releases the grant,
// reports that as the lease's EventRelease and returns ErrClosed.
func (c *Client) start(ctx context.Context, g Grant, a acquired, ttl, minHold time.Duration) (l *Lease, reported bool, err error) {
	deadline := c.holdDeadline(g, a.sent, ttl)
	l = &Lease{c: c, ttl: ttl, grant: g, values: detach(ctx), sent: a.sent, deadline: deadline}
	now := c.opts.Clock.Now()
	if minHold > 0 {
		l.holdUntil = now.Add(minHold)
	}
	if !now.Before(deadline) {
		// A late "you have the lock" (late.go): the reply came after the
		// holder's deadline, so the grant may already belong to someone
		// else. A waiting acquire dropped the grants it found late; this
		// one passed its deadline since, or came from a single attempt.
		err := &LostError{Key: g.Key, Token: g.Token, Reason: errLateGrant}
		l.end(err)
		l.storeRelease(ctx)
		return nil, false, err
	}
	if c.opts.Observer != nil {
		if c.isClosed() {
			l.end(ErrClosed)
			l.storeRelease(ctx)
			return nil, false, ErrClosed
		}
		// Without the lock: an observer that calls Close (which the
		// Observer rules forbid) delays it by ReleaseTimeout, no more.
		c.observeAcquire(ctx, g.Key, a, nil)
		reported = true
	}
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		l.end(ErrClosed)
		if reported {
			l.releaseObserved(ctx) // the grant's end, after its report
		} else {
			l.storeRelease(ctx)
		}
		return nil, reported, ErrClosed
	}
	c.schedule(l)
	c.mu.Unlock()
	return l, reported, nil
}

// isClosed reports whether Close has begun.
func (c *Client) isClosed() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.closed
}

// Key returns the lease's key.
func (l *Lease) Key() string { return l.grant.Key }

// Token returns the fencing token of the grant.
func (l *Lease) Token() uint64 { return l.grant.Token }

// Owner returns the owner id that proves ownership to the store.
func (l *Lease) Owner() string { return l.grant.Owner }

// TTL returns the lease's TTL.
func (l *Lease) TTL() time.Duration { return l.ttl }

// Grant returns the store's grant.
func (l *Lease) Grant() Grant { return l.grant }

// Context returns a context that is cancelled when ownership ends; its
// cause (context.Cause) says why. It carries the fencing token.
func (l *Lease) Context() context.Context {
	if l.made.Load() {
		return l.ctx
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.made.Load() {
		l.ctx, l.cancel = context.WithCancelCause(fence.WithToken(l.values, l.grant.Token))
		if l.cause != nil {
			l.cancel(l.cause)
		}
		l.made.Store(true)
	}
	return l.ctx
}

// end records why the lease ended and cancels its context with it, if
// that has been made; the first cause stays, as a context's does.
func (l *Lease) end(cause error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.cause == nil {
		l.cause = cause
	}
	if l.cancel != nil {
		l.cancel(l.cause)
	}
}

// Done is Context().Done().
func (l *Lease) Done() <-chan struct{} { return l.Context().Done() }

// Err returns nil while the lease is held, then why it ended
// (ErrReleased, or a *LostError).
func (l *Lease) Err() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.cause
}

// Deadline returns the holder-side deadline: t_send of the last successful
// acquire or renew + TTL*(1-rho) - margin.
func (l *Lease) Deadline() time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.deadline
}

// Remaining returns the holder-side time left, 0 once the lease has ended
// or its deadline has passed. It reads the clock, so it is 0 from the
// deadline on even if the client's scheduler has not yet cancelled the
// context.
func (l *Lease) Remaining() time.Duration {
	if l.Err() != nil {
		return 0
	}
	return max(l.Deadline().Sub(l.c.opts.Clock.Now()), 0)
}

// Checkpoint returns nil if the lease is held with at least need left, and
// otherwise an error: the lease's end cause, a *LostError wrapping
// ErrExpired once the deadline has passed (judged by the clock, whether or
// not the context has been cancelled yet), or one wrapping
// ErrInsufficientTime. Call it before each side effect. It narrows the
// unsafe window; only a fence closes it.
func (l *Lease) Checkpoint(need time.Duration) error {
	if err := l.Err(); err != nil {
		return err
	}
	left := l.Deadline().Sub(l.c.opts.Clock.Now())
	if left <= 0 {
		return &LostError{Key: l.grant.Key, Token: l.grant.Token, Reason: ErrExpired}
	}
	if left < need {
		return fmt.Errorf("%w: lease on %q has %s left, the step needs %s", ErrInsufficientTime, l.grant.Key, left, need)
	}
	return nil
}

// Release ends the lease: it cancels the lease's context with ErrReleased,
// then deletes the grant from the store on a context detached from ctx
// (which may already be cancelled) with the client's ReleaseTimeout. It
// returns nil on success; the *LostError if the lease had been lost before
// the release (the holder's work may have run unprotected); or the store's
// error. Calling it again returns the same result. A lease acquired with
// a MinHold that has not yet passed is kept in the store until it has (see
// AcquireOptions.MinHold): Release then cancels its context and returns
// nil at once.
func (l *Lease) Release(ctx context.Context) error {
	l.releaseOnce.Do(func() {
		l.c.mu.Lock()
		if l.c.keep(l) {
			l.c.mu.Unlock()
			return
		}
		l.c.halt(l) // no deadline, renewal or loss can end it from here on
		l.c.mu.Unlock()
		if cause := l.Err(); errors.Is(cause, ErrLost) {
			l.releaseErr = cause
			return
		}
		l.end(ErrReleased)
		l.releaseErr = l.releaseObserved(ctx)
	})
	return l.releaseErr
}

// releaseObserved deletes the grant from the store, reports that to the
// observer as an EventRelease, and returns the store's answer (a
// *LostError when the store no longer held the grant).
func (l *Lease) releaseObserved(ctx context.Context) error {
	o := l.c.opts.Observer
	var start time.Time
	if o != nil {
		start = l.c.opts.Clock.Now()
	}
	err := l.storeRelease(ctx)
	if errors.Is(err, ErrNotHeld) {
		err = &LostError{Key: l.grant.Key, Token: l.grant.Token, Reason: err}
	}
	if o != nil {
		now := l.c.opts.Clock.Now()
		o.Observe(Event{Context: ctx, Kind: EventRelease, Key: l.grant.Key, Token: l.grant.Token, Err: err,
			Held: now.Sub(l.sent), Latency: now.Sub(start)})
	}
	return err
}

// storeRelease calls the store's Release once per lease, so that a store's
// private resources (a dedicated connection) are freed exactly once.
func (l *Lease) storeRelease(ctx context.Context) error {
	l.mu.Lock()
	if l.released {
		l.mu.Unlock()
		return nil
	}
	l.released = true
	l.mu.Unlock()
	return l.c.store.Release(l.c.releaseContext(ctx), l.grant)
}

// detach returns ctx without its cancellation, keeping its values, like
// context.WithoutCancel, but returns ctx itself when it can never be
// cancelled (context.Background, or a chain of values over it), which saves
// an allocation per call on the common path.
func detach(ctx context.Context) context.Context {
	if ctx.Done() == nil {
		return ctx
	}
	return context.WithoutCancel(ctx)
}
