package leasehold

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/leasehold-go/leasehold/fence"
)

// Client acquires leases from a Store and runs their lifecycle: renewal,
// the holder-side deadline, and cancellation of each lease's context the
// moment ownership ends. A Client is safe for concurrent use.
type Client struct {
	store Store
	info  Info
	opts  Options

	mu      sync.Mutex
	leases  map[*Lease]struct{}
	groups  map[time.Duration]*batchGroup  // BatchRenewer stores: one group per TTL
	watches map[<-chan struct{}]*lostWatch // one per distinct Grant.Lost channel
	closed  bool

	// closing ends when Close begins; every waiting acquire's context
	// derives from it (close.go).
	closing    context.Context
	endWaiters context.CancelCauseFunc

	// The scheduler (sched.go), guarded by mu but for wake.
	events    eventHeap
	epoch     time.Time     // the heap's time origin: Clock.Now() at New
	looping   bool          // its goroutine is running
	loopDone  chan struct{} // closed when that goroutine returns
	idleSince time.Time     // when the loop found the heap empty; zero while not idle
	armed     time.Time     // the time its timer is set for
	wake      chan struct{} // pokes it to look at the heap again

	bg sync.WaitGroup // the releases of lost leases

	release atomic.Pointer[sharedDeadline] // the releases' deadline (release_ctx.go)

	// acquiring counts the acquires and claims past their open check that
	// have not yet returned; Close waits for them (close.go).
	acquiring sync.WaitGroup
}

// New returns a client over store. A nil opts means the defaults. It
// fails only on invalid options.
func New(store Store, opts *Options) (*Client, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	o, err := o.withDefaults()
	if err != nil {
		return nil, err
	}
	closing, endWaiters := context.WithCancelCause(context.Background())
	return &Client{
		closing:    closing,
		endWaiters: endWaiters,
		store:      store,
		info:       store.Info(),
		opts:       o,
		leases:     make(map[*Lease]struct{}),
		groups:     make(map[time.Duration]*batchGroup),
		watches:    make(map[<-chan struct{}]*lostWatch),
		wake:       make(chan struct{}, 1),
		epoch:      o.Clock.Now(),
	}, nil
}

// Store returns the client's store.
func (c *Client) Store() Store { return c.store }

// Options returns the client's options, with the defaults filled in.
func (c *Client) Options() Options { return c.opts }

// errWaitOver is the cause of an acquire's context when its Wait ran out.
var errWaitOver = errors.New("leasehold: wait ran out")

// Acquire acquires key. With a zero opts.Wait it tries once and returns a
// *HeldError (errors.Is ErrHeld) if another owner holds the key. With a
// positive Wait it waits up to that long, waking on the store's
// notification when it has one and otherwise retrying with capped
// exponential backoff and full jitter; when the wait runs out it returns the
// last *HeldError (or, if the store kept failing, the last *StoreError:
// store failures are retried while waiting, but not a closed store's). A
// grant whose reply arrives after the holder's deadline is released, never
// returned: a waiting acquire waits on; a single try returns its
// *LostError (wrapping ErrExpired). If
// ctx ends first it returns ctx's error (context.Canceled or
// context.DeadlineExceeded, with its cause); if the client is closed
// first, an error matching ErrClosed.
//
// The lease's context derives from ctx's values but not its cancellation:
// ctx bounds the acquire only. Release the lease, or use Do.
func (c *Client) Acquire(ctx context.Context, key string, opts AcquireOptions) (*Lease, error) {
	var called time.Time
	if c.opts.Observer != nil {
		called = c.opts.Clock.Now()
	}
	attempts, entered := 0, false
	req, g, sent, err := c.grant(ctx, key, opts, &attempts, &entered)
	a := acquired{token: g.Token, called: called, sent: sent, attempts: attempts}
	var l *Lease
	reported := false
	if err == nil {
		// start reports a grant it keeps itself, before anything can end
		// the lease (see EventAcquire).
		l, reported, err = c.start(ctx, g, a, req.TTL, opts.MinHold)
	}
	if entered {
		c.acquiring.Done()
	}
	if !reported {
		c.observeAcquire(ctx, key, a, err)
	}
	return l, err
}

// grant obtains a grant of key from the store as Acquire describes, with
// the request it answers and the time its successful attempt was sent; it
// counts the store attempts in *attempts. It sets *entered when it counted
// the acquire in c.acquiring; the caller then calls c.acquiring.Done once
// it has started (or released) the grant.
func (c *Client) grant(ctx context.Context, key string, opts AcquireOptions, attempts *int, entered *bool) (AcquireRequest, Grant, time.Time, error) {
	req, err := c.request(key, opts)
	if err == nil && opts.Wait < 0 {
		err = fmt.Errorf("%w: wait %s is negative", ErrInvalidWait, opts.Wait)
	}
	if err == nil && (opts.MinHold < 0 || opts.MinHold > MaxTTL) {
		err = fmt.Errorf("%w: MinHold %s is outside [0, %s]", ErrInvalidMinHold, opts.MinHold, MaxTTL)
	}
	if err == nil {
		err = c.enter()
		*entered = err == nil
	}
	if err != nil {
		return req, Grant{}, time.Time{}, err
	}
	if opts.Wait != 0 {
		g, sent, err := c.waitFor(ctx, req, opts.Wait, attempts)
		return req, g, sent, err
	}
	sent := c.opts.Clock.Now()
	*attempts++
	g, err := c.store.Acquire(ctx, req)
	return req, g, sent, err
}

// waitFor waits up to wait (or forever) for req to be granted.
func (c *Client) waitFor(ctx context.Context, req AcquireRequest, wait time.Duration, attempts *int) (Grant, time.Time, error) {
	wctx, cancel := c.waitContext(ctx, wait)
	defer cancel()
	answered := false
	g, sent, err := c.wait(wctx, req, attempts, &answered)
	if err != nil && ctx.Err() == nil {
		switch context.Cause(wctx) {
		case errWaitOver:
			if !answered {
				// The wait ran out before any attempt was answered (a
				// Wait shorter than a round trip): a wait makes at
				// least one attempt.
				return c.lastTry(ctx, req, attempts)
			}
			return Grant{}, time.Time{}, c.lastHolder(ctx, req.Key, err)
		case errClientClosed:
			return Grant{}, time.Time{}, errClientClosed
		}
	}
	return g, sent, err
}

func (c *Client) request(key string, opts AcquireOptions) (AcquireRequest, error) {
	if err := ValidateKey(key); err != nil {
		return AcquireRequest{}, err
	}
	ttl := opts.TTL
	if ttl == 0 {
		ttl = c.opts.TTL
	}
	if err := ValidateTTL(ttl, c.info); err != nil {
		return AcquireRequest{}, err
	}
	if err := c.opts.checkInterval(ttl); err != nil {
		return AcquireRequest{}, err
	}
	if hold := c.opts.HoldFor(ttl); hold <= c.opts.FirstRenewal(ttl) {
		return AcquireRequest{}, fmt.Errorf("%w: TTL %s leaves %s after the drift allowance (rho %v, margin %s), not enough to renew at %s", ErrInvalidTTL, ttl, max(hold, 0), c.opts.Rho, c.opts.Margin, c.opts.FirstRenewal(ttl))
	}
	return AcquireRequest{Key: key, Owner: NewOwnerID(), Label: c.opts.Label, TTL: ttl}, nil
}

// wait retries req until it is granted or ctx ends. Every store attempt
// carries a fresh owner id: an attempt whose answer was lost may still be
// applied, or cleaned up by the store, after a later attempt has won, and a
// clean-up that matches the owner must never reach the later grant. It
// sets *answered once an attempt got the store's answer (not merely its
// context's end).
func (c *Client) wait(ctx context.Context, req AcquireRequest, attempts *int, answered *bool) (Grant, time.Time, error) {
	if w, ok := c.store.(Waiter); ok {
		return c.waitQueued(ctx, w, req, attempts, answered)
	}
	var wake <-chan struct{}
	if n, ok := c.store.(Notifier); ok {
		ch, unsubscribe, err := n.Subscribe(ctx, req.Key)
		if err != nil {
			return Grant{}, time.Time{}, err
		}
		defer unsubscribe()
		wake = ch
	}
	var last error // the previous attempt's answer
	for attempt, tries := 1, 0; ; attempt, tries = attempt+1, tries+1 {
		if tries > 0 {
			req.Owner = NewOwnerID() // also after a wake-up restarts the backoff
		}
		sent := c.opts.Clock.Now()
		*attempts++
		g, err := c.store.Acquire(ctx, req)
		if err == nil {
			if err = c.dropLate(ctx, g, sent, req.TTL); err == nil {
				return g, sent, nil
			}
		}
		if ctx.Err() != nil && !errors.Is(err, ErrHeld) {
			// The attempt was cut short by the context.
			return Grant{}, time.Time{}, c.waitEnded(ctx, cmp.Or(last, err))
		}
		last, *answered = err, true
		// Held: wait for it. A store failure (a restart, a reset
		// connection) or a late grant (released) is retried the same way
		// until the wait ends; any other error is final.
		if !retryable(err) && !isLate(err) {
			return Grant{}, time.Time{}, err
		}
		woken, ok := c.pause(ctx, c.retryDelay(attempt, req.TTL, err), wake)
		if !ok {
			return Grant{}, time.Time{}, c.waitEnded(ctx, err)
		}
		if woken {
			attempt = 0 // a release was announced: start the backoff over
		}
	}
}

// waitQueued waits on a store that queues waiters itself. A store failure
// while queued (a leader election, a broken connection) is retried with a
// fresh owner id until the wait ends, as the polling loop retries it. A
// queued attempt made before the wait ran out counts as answered: the
// store queued it for the whole wait (a queue's AcquireWait may end with a
// bare context error when its turn did not come).
func (c *Client) waitQueued(ctx context.Context, w Waiter, req AcquireRequest, attempts *int, answered *bool) (Grant, time.Time, error) {
	for attempt := 1; ; attempt++ {
		if attempt > 1 {
			req.Owner = NewOwnerID()
		}
		if ctx.Err() == nil {
			*answered = true
		}
		*attempts++
		g, sent, err := c.acquireQueued(ctx, w, req)
		if err == nil {
			return g, sent, nil
		}
		if ctx.Err() != nil {
			return Grant{}, time.Time{}, c.waitEnded(ctx, err)
		}
		if !retryable(err) && !isLate(err) {
			return Grant{}, time.Time{}, err
		}
		if _, ok := c.pause(ctx, c.retryDelay(attempt, req.TTL, err), nil); !ok {
			return Grant{}, time.Time{}, c.waitEnded(ctx, err)
		}
	}
}

// acquireQueued makes one queued attempt. The grant was made at some moment
// during the wait; the holder cannot know which, so it anchors its deadline
// on a renewal sent after the grant arrived (one more round trip, on the
// waiting path only).
func (c *Client) acquireQueued(ctx context.Context, w Waiter, req AcquireRequest) (Grant, time.Time, error) {
	g, err := w.AcquireWait(ctx, req)
	if err != nil {
		return Grant{}, time.Time{}, err
	}
	sent := c.opts.Clock.Now()
	if _, err := c.store.Renew(ctx, g); err != nil {
		rctx, cancel := context.WithTimeout(detach(ctx), c.opts.ReleaseTimeout)
		defer cancel()
		_ = c.store.Release(rctx, g)
		if errors.Is(err, ErrNotHeld) {
			err = &LostError{Key: g.Key, Token: g.Token, Reason: err}
		}
		return Grant{}, time.Time{}, err
	}
	if err := c.dropLate(ctx, g, sent, req.TTL); err != nil {
		return Grant{}, time.Time{}, err
	}
	return g, sent, nil
}

// retryable reports whether a waiting acquire tries again after err: the
// key was held, or the store failed, but not because it was closed (a
// closed store fails every later call alike).
func retryable(err error) bool {
	return (errors.Is(err, ErrHeld) || errors.Is(err, ErrStore)) && !errors.Is(err, ErrClosed)
}

// pause sleeps d, or less: it returns woken when wake fires first (a
// release was announced), and ok false when ctx ends first.
func (c *Client) pause(ctx context.Context, d time.Duration, wake <-chan struct{}) (woken, ok bool) {
	t := c.opts.Clock.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false, false
	case <-wake:
		return true, true
	case <-t.C():
		return false, true
	}
}

// waitEnded is a waiting acquire's error once ctx has ended: last (the last
// *HeldError or store failure) when the Wait ran out, else ctx's error.
func (c *Client) waitEnded(ctx context.Context, last error) error {
	if context.Cause(ctx) == errWaitOver && last != nil {
		return last
	}
	return ctx.Err()
}

// retryDelay is the pause before a waiter's next attempt: the backoff,
// capped at a third of the TTL asked for (so a waiter looks at least as
// often as a holder renews) and, when the store said how long the holder's
// lease has left, at that time plus a little jitter (so a waiter finds an
// expired lease promptly instead of after a long backoff).
func (c *Client) retryDelay(attempt int, ttl time.Duration, err error) time.Duration {
	d := min(c.opts.Backoff.Delay(attempt), max(ttl/3, time.Millisecond))
	var he *HeldError
	if errors.As(err, &he) && he.Remaining > 0 && he.Remaining < d {
		d = he.Remaining + jitter(time.Millisecond, 0.5)
	}
	return d
}

// lastHolder turns a wait that ran out into a *HeldError naming the holder.
func (c *Client) lastHolder(ctx context.Context, key string, err error) error {
	var he *HeldError
	if errors.As(err, &he) {
		return he
	}
	if errors.Is(err, ErrStore) {
		return err
	}
	h, herr := c.store.Holder(ctx, key)
	switch {
	case herr == nil:
		return &HeldError{Key: key, Label: h.Label, Token: h.Token, Remaining: h.Remaining}
	case errors.Is(herr, ErrNotHeld):
		return &HeldError{Key: key} // freed just as the wait ran out
	default:
		return herr
	}
}

// Do acquires key (waiting as opts says), runs fn with a context that ends
// when ctx ends or the lease is lost (and carries the lease's fencing token
// for fence.TokenFrom and fence.RoundTripper), and releases the lease on every path,
// including a panic in fn (which is re-raised after the release). It
// returns fn's error; if the lease was lost while fn ran, the *LostError is
// joined to it, because fn's work may have run unprotected.
func (c *Client) Do(ctx context.Context, key string, opts AcquireOptions, fn func(ctx context.Context, l *Lease) error) (err error) {
	l, err := c.Acquire(ctx, key, opts)
	if err != nil {
		return err
	}
	// The work's context carries the fencing token, like the lease's own
	// context, so fence.RoundTripper and fence.TokenFrom see it.
	runCtx, cancel := context.WithCancelCause(fence.WithToken(ctx, l.Token()))
	stop := context.AfterFunc(l.Context(), func() { cancel(context.Cause(l.Context())) })
	defer func() {
		stop()
		cancel(nil)
		rerr := l.Release(ctx)
		if errors.Is(rerr, ErrLost) {
			err = errors.Join(err, rerr)
		}
	}()
	return fn(runCtx, l)
}
