package leasehold

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// errClientClosed is the cause of a waiting acquire's context when Close
// ended it, and that acquire's error.
var errClientClosed = fmt.Errorf("%w: the client was closed while the acquire waited", ErrClosed)

// waitContext is the context of an acquire that waits up to wait (or
// forever): it ends with ctx, when the wait runs out (cause errWaitOver),
// or when Close begins (cause errClientClosed).
func (c *Client) waitContext(ctx context.Context, wait time.Duration) (context.Context, context.CancelFunc) {
	cctx, cancelClosed := context.WithCancelCause(ctx)
	stop := context.AfterFunc(c.closing, func() { cancelClosed(errClientClosed) })
	wctx, cancelWait := cctx, context.CancelFunc(func() {})
	if wait != WaitForever {
		wctx, cancelWait = context.WithTimeoutCause(cctx, wait, errWaitOver)
	}
	return wctx, func() {
		stop()
		cancelWait()
		cancelClosed(nil)
	}
}

// lastTry makes the one attempt of a wait that ran out before any attempt
// was answered, with a fresh owner id, on the caller's ctx, ended by Close
// too and bounded by the hold time of req's TTL (a later grant would
// arrive after the holder's deadline anyway).
func (c *Client) lastTry(ctx context.Context, req AcquireRequest, attempts *int) (Grant, time.Time, error) {
	tctx, cancel := c.waitContext(ctx, c.opts.HoldFor(req.TTL))
	defer cancel()
	req.Owner = NewOwnerID()
	sent := c.opts.Clock.Now()
	*attempts++
	g, err := c.store.Acquire(tctx, req)
	if err != nil && ctx.Err() == nil && context.Cause(tctx) == errClientClosed {
		err = errClientClosed
	}
	return g, sent, err
}

// enter counts an acquire in c.acquiring unless the client is closed. The
// check and the count share mu with Close's setting of closed, so no
// acquire is counted after Close began to wait for them.
func (c *Client) enter() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return ErrClosed
	}
	c.acquiring.Add(1)
	return nil
}

// Close ends every acquire still waiting (each returns an error matching
// ErrClosed) and waits for every acquire in flight to return (a grant
// that arrives now is released), releases every lease the client still holds (a lease released but kept
// for its AcquireOptions.MinHold is freed at once) and stops its
// goroutines: it waits for the scheduler to stop and for the background
// releases of lost leases (each bounded by ReleaseTimeout). Later acquires
// fail with ErrClosed. It does not close the store.
func (c *Client) Close() error {
	c.mu.Lock()
	c.closed = true
	ls := make([]*Lease, 0, len(c.leases))
	for l := range c.leases {
		ls = append(ls, l)
	}
	c.mu.Unlock()
	c.endWaiters(ErrClosed)
	// A waiter whose grant arrived as the close began releases it (start
	// sees closed): wait for that, so no acquire of this client runs, and
	// no grant it got is still held, once Close returns. A single attempt
	// is not ended by Close, and a store may never answer it: the wait is
	// bounded by ReleaseTimeout, as the releases below are.
	c.awaitAcquires(c.opts.ReleaseTimeout)
	var errs []error
	for _, l := range ls {
		err := l.Release(context.Background())
		if err == nil {
			err = l.dropHold() // a lease kept for its MinHold is freed now
		}
		if err != nil && !errors.Is(err, ErrLost) {
			errs = append(errs, err)
		}
	}
	c.mu.Lock()
	done := c.loopDone
	looping := c.looping
	c.poke() // a loop lingering over an empty heap exits now
	c.mu.Unlock()
	if looping {
		<-done
	}
	c.bg.Wait()
	return errors.Join(errs...)
}

// awaitAcquires waits until no acquire of c is in flight, or for at most
// limit of real time.
func (c *Client) awaitAcquires(limit time.Duration) {
	done := make(chan struct{})
	go func() {
		c.acquiring.Wait()
		close(done)
	}()
	t := time.NewTimer(limit)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
	}
}
