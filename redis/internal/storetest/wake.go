package storetest

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/leasehold-go/leasehold"
)

func (e *Env) wakeOnRelease(t *testing.T) {
	st := e.open(t)
	Wake(t, st, st)
}

// NotifyingStore is a store that can wake waiters.
type NotifyingStore interface {
	leasehold.Store
	leasehold.Notifier
}

// observed wraps a store to report the first acquire refused as held.
type observed struct {
	NotifyingStore
	refused chan struct{}
	once    atomic.Bool
}

func (o *observed) Acquire(ctx context.Context, r leasehold.AcquireRequest) (leasehold.Grant, error) {
	g, err := o.NotifyingStore.Acquire(ctx, r)
	if errors.Is(err, leasehold.ErrHeld) && o.once.CompareAndSwap(false, true) {
		close(o.refused)
	}
	return g, err
}

// Wake checks that a waiter wakes on the release notification, not on
// its backoff: the backoff is an hour, so only the notification can get it
// the key before the test's deadline.
func Wake(t *testing.T, holderStore, waiterStore NotifyingStore) {
	k := Key(t, "k")
	g, err := holderStore.Acquire(Ctx(t), Req(k, time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	ob := &observed{NotifyingStore: waiterStore, refused: make(chan struct{})}
	c, err := leasehold.New(ob, &leasehold.Options{Backoff: leasehold.ConstBackoff(time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	type result struct {
		l   *leasehold.Lease
		err error
		at  time.Time
	}
	done := make(chan result, 1)
	ctx := Ctx(t)
	go func() {
		l, err := c.Acquire(ctx, k, leasehold.AcquireOptions{TTL: time.Minute, Wait: leasehold.WaitForever})
		done <- result{l, err, time.Now()}
	}()
	// The waiter has subscribed and been refused: it now sleeps for an
	// hour unless the release wakes it.
	select {
	case <-ob.refused:
	case r := <-done:
		t.Fatalf("waiter returned before being refused: %v", r.err)
	}
	released := time.Now()
	if err := holderStore.Release(Ctx(t), g); err != nil {
		t.Fatal(err)
	}
	r := <-done
	if r.err != nil {
		t.Fatalf("waiter: %v", r.err)
	}
	t.Logf("waiter got the key %s after the release (information, not asserted)", r.at.Sub(released))
	if err := r.l.Release(Ctx(t)); err != nil {
		t.Fatal(err)
	}
}

// Losing the pub/sub connection wakes every waiter (a release may have
// been missed); the next subscription opens a new connection.
func (e *Env) wakeOnConnectionLoss(t *testing.T) {
	st := e.open(t)
	k := Key(t, "k")
	ch, cancel, err := st.Subscribe(Ctx(t), k)
	if err != nil {
		t.Fatal(err)
	}
	defer cancel()
	Restart(t, e.Server)
	select {
	case <-ch:
	case <-Ctx(t).Done():
		t.Fatal("no wake-up after the server restarted")
	}
	ch2, cancel2, err := st.Subscribe(Ctx(t), k)
	if err != nil {
		t.Fatalf("subscribe after the restart: %v", err)
	}
	defer cancel2()
	// A command on a connection the restart broke may fail (EOF: a client
	// does not resend a write it may have sent); the client's next
	// connection works.
	var g leasehold.Grant
	settle(t, func() (err error) { g, err = st.Acquire(Ctx(t), Req(k, time.Minute)); return err })
	settle(t, func() error { return st.Release(Ctx(t), g) })
	select {
	case <-ch2:
	case <-Ctx(t).Done():
		t.Fatal("no wake-up on release after the reconnection")
	}
}

// settle retries f while it fails with a store error, a few times.
func settle(t *testing.T, f func() error) {
	t.Helper()
	var err error
	for range 5 {
		if err = f(); !errors.Is(err, leasehold.ErrStore) {
			break
		}
	}
	if err != nil {
		t.Fatal(err)
	}
}

// A key's channel is subscribed once for all its waiters, and dropped
// after the last leaves.
func (e *Env) subscriptionLifetime(t *testing.T) {
	st := e.open(t)
	k := Key(t, "k")
	channel := "leasehold:{" + k + "}:free"
	subscribers := func() string { return e.command(t, e.Server, "PUBSUB", "NUMSUB", channel) }
	_, c1, err := st.Subscribe(Ctx(t), k)
	if err != nil {
		t.Fatal(err)
	}
	_, c2, err := st.Subscribe(Ctx(t), k)
	if err != nil {
		t.Fatal(err)
	}
	if n := subscribers(); n != "["+channel+" :1]" {
		t.Fatalf("two waiters: PUBSUB NUMSUB = %s, want one shared subscription", n)
	}
	c1()
	c2()
	for end := time.Now().Add(10 * time.Second); subscribers() != "["+channel+" :0]"; {
		if time.Now().After(end) {
			t.Fatal("channel still subscribed 10s after its last waiter left")
		}
		time.Sleep(10 * time.Millisecond)
	}
}
