package otel_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/memory"
)

// How long each store call takes by the fake clock.
const (
	acquireTook = 5 * time.Millisecond
	renewTook   = 7 * time.Millisecond
	releaseTook = 3 * time.Millisecond
)

// scripted is the memory store with a fixed duration per call (by the
// fake clock), renewals that fail on demand, and a record of every call
// made, in order.
type scripted struct {
	*memory.Store
	clock *fakeClock
	calls chan string

	mu       sync.Mutex
	renewErr error
	acqErr   error
	gate     chan struct{} // when set, acquires wait until it closes
}

func newScripted(clock *fakeClock) *scripted {
	return &scripted{Store: memory.New(&memory.Options{Now: clock.Now}), clock: clock, calls: make(chan string, 64)}
}

// failRenewals makes every renewal from now on fail with err (nil: pass).
func (s *scripted) failRenewals(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.renewErr = err
}

// failAcquires makes every acquire from now on fail with err (nil: pass).
func (s *scripted) failAcquires(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.acqErr = err
}

// holdAcquires makes acquires wait until the function returned is called.
func (s *scripted) holdAcquires() (open func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	gate := make(chan struct{})
	s.gate = gate
	return func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.gate = nil
		close(gate)
	}
}

func (s *scripted) Acquire(ctx context.Context, r leasehold.AcquireRequest) (leasehold.Grant, error) {
	s.mu.Lock()
	gate, err := s.gate, s.acqErr
	s.mu.Unlock()
	if gate != nil {
		<-gate
	}
	s.clock.Advance(acquireTook)
	var g leasehold.Grant
	if err == nil {
		g, err = s.Store.Acquire(ctx, r)
	}
	s.calls <- "acquire"
	return g, err
}

func (s *scripted) Renew(ctx context.Context, g leasehold.Grant) (leasehold.Grant, error) {
	s.clock.Advance(renewTook)
	s.mu.Lock()
	err := s.renewErr
	s.mu.Unlock()
	if err == nil {
		g, err = s.Store.Renew(ctx, g)
	}
	s.calls <- "renew"
	return g, err
}

func (s *scripted) Release(ctx context.Context, g leasehold.Grant) error {
	s.clock.Advance(releaseTook)
	err := s.Store.Release(ctx, g)
	s.calls <- "release"
	return err
}

// await waits for the next store call to end and checks that it was op.
func (s *scripted) await(t *testing.T, op string) {
	t.Helper()
	select {
	case got := <-s.calls:
		if got != op {
			t.Fatalf("store call %s, want %s", got, op)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("no %s call in 10 s", op)
	}
}

// tee passes each event to the observer under test and keeps it, in
// order, for the test to wait on.
type tee struct {
	next   leasehold.Observer
	events chan leasehold.Event
}

func (o *tee) Observe(e leasehold.Event) {
	o.next.Observe(e)
	o.events <- e
}

// await waits for the next event and checks its kind.
func (o *tee) await(t *testing.T, k leasehold.EventKind) leasehold.Event {
	t.Helper()
	select {
	case e := <-o.events:
		if e.Kind != k {
			t.Fatalf("event %s (%+v), want %s", e.Kind, e, k)
		}
		return e
	case <-time.After(10 * time.Second):
		t.Fatalf("no %s event in 10 s", k)
	}
	return leasehold.Event{}
}
