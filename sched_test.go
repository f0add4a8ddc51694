package leasehold_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/memory"
)

// The tests in this file pin the client's scheduler: one per client, not a
// goroutine per lease, and no lease's end waiting on another's store call.

func TestHeldLeasesNeedNoGoroutineEach(t *testing.T) {
	c := newClient(t, memory.New(nil), nil)
	before := runtime.NumGoroutine()
	const n = 200
	for i := range n {
		l, err := c.Acquire(context.Background(), fmt.Sprintf("k%d", i), leasehold.AcquireOptions{TTL: time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		defer l.Release(context.Background())
	}
	if added := runtime.NumGoroutine() - before; added >= n/10 {
		t.Errorf("%d held leases added %d goroutines, want a handful for the whole client", n, added)
	}
}

// lostChans is a memory store whose grants carry a Lost channel that the
// test chooses per key.
type lostChans struct {
	*memory.Store
	chans map[string]chan struct{}
}

func (s *lostChans) Acquire(ctx context.Context, r leasehold.AcquireRequest) (leasehold.Grant, error) {
	g, err := s.Store.Acquire(ctx, r)
	g.Lost = s.chans[r.Key]
	return g, err
}

func TestLostChannelEndsEveryLeaseThatCarriesIt(t *testing.T) {
	session, other := make(chan struct{}), make(chan struct{})
	st := &lostChans{Store: memory.New(nil), chans: map[string]chan struct{}{"a": session, "b": session, "c": other}}
	c := newClient(t, st, nil)
	ls := map[string]*leasehold.Lease{}
	for _, k := range []string{"a", "b", "c"} {
		l, err := c.Acquire(context.Background(), k, leasehold.AcquireOptions{TTL: time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		ls[k] = l
	}
	close(session)
	for _, k := range []string{"a", "b"} {
		select {
		case <-ls[k].Done():
		case <-time.After(10 * time.Second):
			t.Fatalf("lease %s still held 10 s after its grant's Lost channel closed", k)
		}
		if err := ls[k].Err(); !errors.Is(err, leasehold.ErrLost) || !errors.Is(err, leasehold.ErrNotHeld) {
			t.Errorf("lease %s: cause %v, want a *LostError wrapping ErrNotHeld", k, err)
		}
	}
	if err := ls["c"].Err(); err != nil {
		t.Errorf("lease c, whose Lost channel is still open, ended: %v", err)
	}
	if err := ls["c"].Release(context.Background()); err != nil {
		t.Fatal(err)
	}
	close(other) // after the release: nothing left to end
}

// oneSlow hangs every renewal of key "slow", ignoring the attempt's
// context until the test ends, and fails every other renewal.
type oneSlow struct {
	*memory.Store
	unblock chan struct{}
}

func (s *oneSlow) Renew(ctx context.Context, g leasehold.Grant) (leasehold.Grant, error) {
	if g.Key == "slow" {
		<-s.unblock
		return leasehold.Grant{}, ctx.Err()
	}
	return leasehold.Grant{}, &leasehold.StoreError{Store: "test", Op: "renew", Err: errors.New("connection reset")}
}

func TestSlowRenewalDoesNotDelayAnotherDeadline(t *testing.T) {
	st := &oneSlow{Store: memory.New(nil), unblock: make(chan struct{})}
	var once sync.Once
	defer once.Do(func() { close(st.unblock) })
	c, err := leasehold.New(st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		once.Do(func() { close(st.unblock) })
		_ = c.Close()
	}()
	slow, err := c.Acquire(context.Background(), "slow", leasehold.AcquireOptions{TTL: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	l, err := c.Acquire(context.Background(), "k", leasehold.AcquireOptions{TTL: 400 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range []*leasehold.Lease{slow, l} {
		select {
		case <-x.Done():
		case <-time.After(10 * time.Second):
			t.Fatalf("lease %s still live 10 s after its deadline %v while another lease's renewal hangs", x.Key(), x.Deadline())
		}
		if !errors.Is(x.Err(), leasehold.ErrExpired) {
			t.Errorf("lease %s: cause %v, want ErrExpired", x.Key(), x.Err())
		}
	}
}

// A Lost watch that lingers after its last lease still sees its channel
// close, and a lease acquired afterwards with a grant that carries the
// closed channel ends at once.
func TestIdleLostWatchSeesTheClose(t *testing.T) {
	session := make(chan struct{})
	st := &lostChans{Store: memory.New(nil), chans: map[string]chan struct{}{"a": session, "b": session, "c": session, "d": session}}
	c := newClient(t, st, nil)
	l, err := c.Acquire(context.Background(), "a", leasehold.AcquireOptions{TTL: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Release(context.Background()); err != nil {
		t.Fatal(err)
	}
	close(session)                              // the watch is idle: no lease carries the channel
	for _, k := range []string{"b", "c", "d"} { // the watch may still be handling the close
		l, err := c.Acquire(context.Background(), k, leasehold.AcquireOptions{TTL: time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		select {
		case <-l.Done():
		case <-time.After(10 * time.Second):
			t.Fatalf("lease %s, whose grant's Lost channel was closed, still held after 10 s", k)
		}
		if err := l.Err(); !errors.Is(err, leasehold.ErrNotHeld) {
			t.Errorf("lease %s: cause %v, want a *LostError wrapping ErrNotHeld", k, err)
		}
	}
}
