package leasehold_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/memory"
)

// lateGrant wraps a memory store: its first Acquire grants in the store,
// reports that on granted, and returns the grant only once the acquire's
// context has ended (Close ended the wait) and Close has returned, or a
// while after, if Close waits for the acquire (the pause is not a check).
type lateGrant struct {
	*memory.Store
	granted  chan struct{}
	closed   chan struct{} // closed when the test's Close returned
	acquires int
}

func (s *lateGrant) Acquire(ctx context.Context, req leasehold.AcquireRequest) (leasehold.Grant, error) {
	s.acquires++
	g, err := s.Store.Acquire(ctx, req)
	if s.acquires > 1 || err != nil {
		return g, err
	}
	close(s.granted)
	<-ctx.Done()
	select {
	case <-s.closed:
	case <-time.After(100 * time.Millisecond):
	}
	return g, nil
}

// TestCloseWaitsForWaitingAcquire: a waiting acquire whose grant arrives
// after Close began has released that grant when Close returns (the old
// Close returned at once, leaving the key held until its TTL).
func TestCloseWaitsForWaitingAcquire(t *testing.T) {
	mem := memory.New(nil)
	defer mem.Close()
	st := &lateGrant{Store: mem, granted: make(chan struct{}), closed: make(chan struct{})}
	c, err := leasehold.New(st, nil)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		l, err := c.Acquire(context.Background(), "k", leasehold.AcquireOptions{TTL: time.Minute, Wait: leasehold.WaitForever})
		if err == nil {
			_ = l.Release(context.Background())
			err = errors.New("granted after Close")
		}
		done <- err
	}()
	<-st.granted
	if err := c.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	h, herr := mem.Holder(context.Background(), "k")
	close(st.closed)
	if !errors.Is(herr, leasehold.ErrNotHeld) {
		t.Errorf("after Close returned, Holder(k) = %+v, %v; want ErrNotHeld (the late grant released)", h, herr)
	}
	if err := <-done; !errors.Is(err, leasehold.ErrClosed) {
		t.Errorf("the waiting acquire returned %v, want ErrClosed", err)
	}
}
