package leasehold

import (
	"context"
	"testing"
	"time"
)

// hungStore never answers an acquire until released.
type hungStore struct {
	Store
	entered chan struct{}
	release chan struct{}
}

func (s *hungStore) Acquire(ctx context.Context, r AcquireRequest) (Grant, error) {
	close(s.entered)
	<-s.release
	return Grant{}, ErrHeld
}

// Close returns although a single-attempt acquire is stuck in a store that
// never answers: its wait for acquires in flight is bounded by
// ReleaseTimeout, not by a caller's context that may never end.
func TestCloseNotHeldByAHungAcquire(t *testing.T) {
	s := &hungStore{Store: &grantAll{}, entered: make(chan struct{}), release: make(chan struct{})}
	defer close(s.release)
	c, err := New(s, &Options{ReleaseTimeout: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	go func() { _, _ = c.Acquire(context.Background(), "k", AcquireOptions{TTL: time.Minute}) }()
	<-s.entered
	closed := make(chan error)
	go func() { closed <- c.Close() }()
	select {
	case <-closed:
	case <-time.After(time.Minute):
		t.Fatal("Close waits on an acquire the store never answers")
	}
}
