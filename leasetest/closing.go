package leasetest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/leasehold-go/leasehold"
)

// closeWaitLimit bounds a waiting acquire in the closing rules. It is not
// a timing check: a wait that ends only with its context was not ended by
// the close, whatever the machine did.
const closeWaitLimit = 30 * time.Second

// waitingAcquire holds k on one handle for long and starts an acquire that
// waits forever for it through c (over another handle, wrapped by
// askedStore). It returns the acquire's result channel and the acquire's
// context once the acquire has asked the store for k (so a rule cannot
// pass with a waiter that never waited), failing the test if it has not
// within closeWaitLimit.
func (s *suite) waitingAcquire(t *testing.T, c *leasehold.Client, asked <-chan struct{}, k string) (<-chan error, context.Context) {
	t.Helper()
	holder := s.open(t)
	ttl := min(max(time.Minute, holder.Info().MinTTL), max(holder.Info().MaxTTL, time.Minute))
	g, err := holder.Acquire(ctxT(t), req(k, ttl))
	if err != nil {
		t.Fatalf("holder's acquire: %v", err)
	}
	t.Cleanup(func() { _ = holder.Release(context.Background(), g) })
	ctx, cancel := context.WithTimeout(context.Background(), closeWaitLimit)
	t.Cleanup(cancel)
	done := make(chan error, 1)
	go func() {
		l, err := c.Acquire(ctx, k, leasehold.AcquireOptions{TTL: s.ttl, Wait: leasehold.WaitForever})
		if err == nil {
			_ = l.Release(context.Background())
			err = errors.New("granted a key that another owner held")
		}
		done <- err
	}()
	select {
	case <-asked:
	case err := <-done:
		t.Fatalf("the waiting acquire returned before it asked the store: %v", err)
	case <-ctx.Done():
		t.Fatalf("the waiting acquire did not ask the store within %s", closeWaitLimit)
	}
	return done, ctx
}

// closedStoreEndsWaiter: an acquire waiting on a store that is then closed
// returns with an error of the store's, not with its context's end: a
// closed store's error is final, never retried.
// See docs/design.md#waiting.
func (s *suite) closedStoreEndsWaiter(t *testing.T) {
	st := s.cfg.Open(t)
	wrapped, asked := askedStore(st)
	c := s.client(t, wrapped, nil)
	done, ctx := s.waitingAcquire(t, c, asked, key(t, "k"))
	if err := st.Close(); err != nil {
		t.Fatalf("closing the waiter's store: %v", err)
	}
	err := <-done
	if ctx.Err() != nil || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		t.Fatalf("the waiting acquire ran until its context ended (%v) after its store was closed: a closed store's error must be final", err)
	}
}

// clientCloseEndsWaiter: Client.Close ends an acquire that is waiting,
// with an error matching leasehold.ErrClosed.
// See docs/design.md#waiting.
func (s *suite) clientCloseEndsWaiter(t *testing.T) {
	wrapped, asked := askedStore(s.open(t))
	c, err := leasehold.New(wrapped, nil)
	if err != nil {
		t.Fatalf("leasehold.New: %v", err)
	}
	done, ctx := s.waitingAcquire(t, c, asked, key(t, "k"))
	if err := c.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	err = <-done
	if ctx.Err() != nil || !errors.Is(err, leasehold.ErrClosed) {
		t.Fatalf("the waiting acquire after Client.Close: %v (its context: %v), want an error matching ErrClosed before its context ends", err, ctx.Err())
	}
}
