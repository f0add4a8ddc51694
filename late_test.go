package leasehold_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/memory"
)

// lateOnce wraps a memory store: the reply to its first grant (or, for a
// waiter's store, to the renewal that anchors its first queued grant)
// comes after delay, past the holder's deadline of a TTL shorter than
// delay, and it records the grants released.
type lateOnce struct {
	*memory.Store
	delay    time.Duration
	mu       sync.Mutex
	first    leasehold.Grant // the grant whose reply came late
	released []leasehold.Grant
}

// late reports, the first time it is called with no error, that this
// reply is the one to delay, and records g as it.
func (s *lateOnce) late(g leasehold.Grant, err error) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil || s.first.Token != 0 {
		return false
	}
	s.first = g
	return true
}

func (s *lateOnce) Acquire(ctx context.Context, r leasehold.AcquireRequest) (leasehold.Grant, error) {
	g, err := s.Store.Acquire(ctx, r)
	if s.late(g, err) {
		time.Sleep(s.delay)
	}
	return g, err
}

func (s *lateOnce) Release(ctx context.Context, g leasehold.Grant) error {
	s.mu.Lock()
	s.released = append(s.released, g)
	s.mu.Unlock()
	return s.Store.Release(ctx, g)
}

// queuedLateOnce is lateOnce on a store that queues waiters itself
// (leasehold.Waiter): the first anchoring renewal's reply is the late one.
type queuedLateOnce struct{ lateOnce }

func (s *queuedLateOnce) Acquire(ctx context.Context, r leasehold.AcquireRequest) (leasehold.Grant, error) {
	return s.Store.Acquire(ctx, r)
}

// AcquireWait queues as the queueing store of client_test.go does.
func (s *queuedLateOnce) AcquireWait(ctx context.Context, r leasehold.AcquireRequest) (leasehold.Grant, error) {
	return (&queueing{Store: s.Store}).AcquireWait(ctx, r)
}

func (s *queuedLateOnce) Renew(ctx context.Context, g leasehold.Grant) (leasehold.Grant, error) {
	r, err := s.Store.Renew(ctx, g)
	if s.late(g, err) {
		time.Sleep(s.delay)
	}
	return r, err
}

// A waiting Acquire whose grant arrives after the holder's deadline
// releases that grant and waits on: it returns a live lease with a
// greater token, never the late grant nor its *LostError (which the
// client returned before). On a polling store and on a queueing one.
func TestWaitingAcquireDropsLateGrant(t *testing.T) {
	const ttl = 100 * time.Millisecond
	for _, tc := range []struct {
		name  string
		store interface {
			leasehold.Store
			grants() (leasehold.Grant, []leasehold.Grant)
		}
	}{
		{"polling", &lateOnce{Store: memory.New(nil), delay: 2 * ttl}},
		{"queued", &queuedLateOnce{lateOnce{Store: memory.New(nil), delay: 2 * ttl}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newClient(t, tc.store, nil)
			l, err := c.Acquire(context.Background(), "k", leasehold.AcquireOptions{TTL: ttl, Wait: time.Minute})
			if err != nil {
				t.Fatalf("waiting acquire after a late grant: %v, want a lease", err)
			}
			defer l.Release(context.Background())
			first, released := tc.store.grants()
			if first.Token == 0 || l.Token() <= first.Token {
				t.Fatalf("lease token %d, want above the late grant's %d", l.Token(), first.Token)
			}
			if len(released) != 1 || released[0].Token != first.Token || released[0].Owner != first.Owner {
				t.Errorf("released %+v, want the late grant %+v alone", released, first)
			}
			if h, err := tc.store.Holder(context.Background(), "k"); err != nil || h.Token != l.Token() {
				t.Errorf("the store's holder is %+v (%v), want token %d", h, err, l.Token())
			}
			if err := l.Err(); err != nil {
				t.Errorf("the lease returned is not live: %v", err)
			}
		})
	}
}

func (s *lateOnce) grants() (leasehold.Grant, []leasehold.Grant) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.first, append([]leasehold.Grant(nil), s.released...)
}
