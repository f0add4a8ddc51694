package leasehold_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/fence"
	"github.com/leasehold-go/leasehold/memory"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// faulty wraps a memory store and lets a test slow down or fail calls.
type faulty struct {
	*memory.Store
	mu           sync.Mutex
	acquireDelay time.Duration
	acquireStart time.Time
	renewErr     error         // returned by Renew while set
	renewBlock   chan struct{} // Renew blocks until closed, while set
	renews       atomic.Int64
}

func (f *faulty) Acquire(ctx context.Context, r leasehold.AcquireRequest) (leasehold.Grant, error) {
	f.mu.Lock()
	f.acquireStart = time.Now()
	d := f.acquireDelay
	f.mu.Unlock()
	time.Sleep(d)
	return f.Store.Acquire(ctx, r)
}

func (f *faulty) Renew(ctx context.Context, g leasehold.Grant) (leasehold.Grant, error) {
	f.renews.Add(1)
	f.mu.Lock()
	err, block := f.renewErr, f.renewBlock
	f.mu.Unlock()
	if block != nil {
		select {
		case <-block:
		case <-ctx.Done():
			return leasehold.Grant{}, ctx.Err()
		}
	}
	if err != nil {
		return leasehold.Grant{}, err
	}
	return f.Store.Renew(ctx, g)
}

func newClient(t *testing.T, s leasehold.Store, o *leasehold.Options) *leasehold.Client {
	t.Helper()
	c, err := leasehold.New(s, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func TestDeadlineIsFromSendTimeNotReply(t *testing.T) {
	f := &faulty{Store: memory.New(nil), acquireDelay: 300 * time.Millisecond}
	c := newClient(t, f, &leasehold.Options{Rho: 0.01, Margin: 5 * time.Millisecond})
	ttl := 2 * time.Second
	l, err := c.Acquire(context.Background(), "k", leasehold.AcquireOptions{TTL: ttl})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release(context.Background())
	hold := time.Duration(float64(ttl)*0.99) - 5*time.Millisecond
	// t_send is before the store saw the request, so the deadline can be
	// no later than the store's start + hold...
	if latest := f.acquireStart.Add(hold); l.Deadline().After(latest) {
		t.Errorf("deadline %v is after t_store_start + hold %v: anchored on the reply", l.Deadline(), latest)
	}
	// ...and is well before reply + hold (the store took 300 ms).
	if l.Deadline().After(time.Now().Add(hold - 250*time.Millisecond)) {
		t.Errorf("deadline re-anchored on the reply's arrival")
	}
}

func TestRenewalHangLosesLeaseAtDeadline(t *testing.T) {
	f := &faulty{Store: memory.New(nil), renewBlock: make(chan struct{})}
	defer close(f.renewBlock)
	var jeopardies atomic.Int64
	c := newClient(t, f, &leasehold.Options{OnJeopardy: func(j leasehold.Jeopardy) { jeopardies.Add(1) }})
	l, err := c.Acquire(context.Background(), "k", leasehold.AcquireOptions{TTL: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-l.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("lease not lost while every renewal hung")
	}
	if !errors.Is(l.Err(), leasehold.ErrExpired) || !errors.Is(l.Err(), leasehold.ErrLost) {
		t.Fatalf("cause = %v, want a *LostError wrapping ErrExpired", l.Err())
	}
	if now := time.Now(); now.Before(l.Deadline()) {
		t.Errorf("lost at %v, before its deadline %v", now, l.Deadline())
	}
	if l.Remaining() != 0 {
		t.Errorf("Remaining after loss = %s", l.Remaining())
	}
	if err := l.Release(context.Background()); !errors.Is(err, leasehold.ErrLost) {
		t.Errorf("Release after loss = %v, want ErrLost", err)
	}
}

func TestTransientRenewErrorsAreRetriedNotLoss(t *testing.T) {
	f := &faulty{Store: memory.New(nil), renewErr: &leasehold.StoreError{Store: "test", Op: "renew", Err: errors.New("connection reset")}}
	var jeopardies atomic.Int64
	c := newClient(t, f, &leasehold.Options{
		OnJeopardy: func(j leasehold.Jeopardy) { jeopardies.Add(1) },
		Backoff:    leasehold.ConstBackoff(20 * time.Millisecond),
	})
	l, err := c.Acquire(context.Background(), "k", leasehold.AcquireOptions{TTL: 900 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	for jeopardies.Load() < 2 {
		select {
		case <-l.Done():
			t.Fatalf("lease lost during transient errors: %v", l.Err())
		case <-time.After(10 * time.Millisecond):
		}
	}
	f.mu.Lock()
	f.renewErr = nil
	f.mu.Unlock()
	// Now renewals succeed: the lease must outlive several TTLs.
	select {
	case <-l.Done():
		t.Fatalf("lease lost after renewals recovered: %v", l.Err())
	case <-time.After(2 * time.Second):
	}
	if err := l.Release(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func TestLateGrantIsNotHeld(t *testing.T) {
	st := memory.New(nil)
	f := &faulty{Store: st, acquireDelay: 150 * time.Millisecond}
	c := newClient(t, f, nil)
	_, err := c.Acquire(context.Background(), "k", leasehold.AcquireOptions{TTL: 100 * time.Millisecond})
	if !errors.Is(err, leasehold.ErrLost) || !errors.Is(err, leasehold.ErrExpired) {
		t.Fatalf("acquire whose reply came after the TTL: got %v, want ErrLost wrapping ErrExpired", err)
	}
	if _, err := st.Holder(context.Background(), "k"); !errors.Is(err, leasehold.ErrNotHeld) {
		t.Errorf("the late grant was not released: %v", err)
	}
}

func TestLeaseContextCarriesTokenAndValues(t *testing.T) {
	c := newClient(t, memory.New(nil), nil)
	type ctxKey struct{}
	ctx := context.WithValue(context.Background(), ctxKey{}, "v")
	l, err := c.Acquire(ctx, "k", leasehold.AcquireOptions{TTL: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release(ctx)
	if tok, ok := fence.TokenFrom(l.Context()); !ok || tok != l.Token() {
		t.Errorf("TokenFrom(lease context) = %d, %v; want %d", tok, ok, l.Token())
	}
	if l.Context().Value(ctxKey{}) != "v" {
		t.Error("lease context lost the acquire context's values")
	}
}

// batching counts RenewMany and Renew calls on a memory store.
type batching struct {
	*memory.Store
	batches, grants, singles atomic.Int64
}

func (b *batching) Renew(ctx context.Context, g leasehold.Grant) (leasehold.Grant, error) {
	b.singles.Add(1)
	return b.Store.Renew(ctx, g)
}

func (b *batching) RenewMany(ctx context.Context, gs []leasehold.Grant) ([]leasehold.RenewResult, error) {
	b.batches.Add(1)
	b.grants.Add(int64(len(gs)))
	res := make([]leasehold.RenewResult, len(gs))
	for i, g := range gs {
		res[i].Grant, res[i].Err = b.Store.Renew(ctx, g)
	}
	return res, nil
}

func TestBatchRenewalOneCallPerPeriod(t *testing.T) {
	b := &batching{Store: memory.New(nil)}
	c := newClient(t, b, nil)
	ttl := 600 * time.Millisecond
	var ls []*leasehold.Lease
	for i := 0; i < 50; i++ {
		l, err := c.Acquire(context.Background(), "k"+string(rune('a'+i%26))+string(rune('a'+i/26)), leasehold.AcquireOptions{TTL: ttl})
		if err != nil {
			t.Fatal(err)
		}
		ls = append(ls, l)
	}
	time.Sleep(3 * ttl)
	for _, l := range ls {
		if err := l.Err(); err != nil {
			t.Fatalf("lease %s ended under batch renewal: %v", l.Key(), err)
		}
		if err := l.Release(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	if n := b.singles.Load(); n != 0 {
		t.Errorf("%d single renewals on a BatchRenewer store, want 0", n)
	}
	batches, grants := b.batches.Load(), b.grants.Load()
	if batches == 0 || grants < 2*batches {
		t.Errorf("%d batches renewing %d grants: want few batches of many grants", batches, grants)
	}
}

func TestCloseReleasesEverything(t *testing.T) {
	st := memory.New(nil)
	c, err := leasehold.New(st, nil)
	if err != nil {
		t.Fatal(err)
	}
	l, err := c.Acquire(context.Background(), "k", leasehold.AcquireOptions{TTL: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if !errors.Is(l.Err(), leasehold.ErrReleased) {
		t.Errorf("lease cause after Close = %v", l.Err())
	}
	if _, err := st.Holder(context.Background(), "k"); !errors.Is(err, leasehold.ErrNotHeld) {
		t.Errorf("key held after Close: %v", err)
	}
	if _, err := c.Acquire(context.Background(), "k", leasehold.AcquireOptions{TTL: time.Minute}); !errors.Is(err, leasehold.ErrClosed) {
		t.Errorf("acquire after Close = %v, want ErrClosed", err)
	}
}

// flaky fails its first n acquires with a store error.
type flaky struct {
	*memory.Store
	fails atomic.Int64
}

func (f *flaky) Acquire(ctx context.Context, r leasehold.AcquireRequest) (leasehold.Grant, error) {
	if f.fails.Add(-1) >= 0 {
		return leasehold.Grant{}, &leasehold.StoreError{Store: "flaky", Op: "acquire", Err: errors.New("connection reset")}
	}
	return f.Store.Acquire(ctx, r)
}

func TestWaiterRetriesStoreFailures(t *testing.T) {
	f := &flaky{Store: memory.New(nil)}
	f.fails.Store(3)
	c := newClient(t, f, &leasehold.Options{Backoff: leasehold.ConstBackoff(time.Millisecond)})
	// Trying once reports the failure...
	if _, err := c.Acquire(context.Background(), "k", leasehold.AcquireOptions{TTL: time.Second}); !errors.Is(err, leasehold.ErrStore) {
		t.Fatalf("try-once acquire on a failing store: got %v, want ErrStore", err)
	}
	// ...a waiter rides out the rest.
	l, err := c.Acquire(context.Background(), "k", leasehold.AcquireOptions{TTL: time.Second, Wait: 10 * time.Second})
	if err != nil {
		t.Fatalf("waiting acquire across store failures: %v", err)
	}
	_ = l.Release(context.Background())
	// A store that never recovers ends the wait with its failure, not ErrHeld.
	f.fails.Store(1 << 40)
	_, err = c.Acquire(context.Background(), "k", leasehold.AcquireOptions{TTL: time.Second, Wait: 50 * time.Millisecond})
	if !errors.Is(err, leasehold.ErrStore) || errors.Is(err, leasehold.ErrHeld) {
		t.Fatalf("wait over a dead store: got %v, want ErrStore", err)
	}
}

// queueing is a Waiter store: AcquireWait polls the memory store, like a
// store whose grant is made at an unknown moment during the wait.
type queueing struct {
	*memory.Store
	renews atomic.Int64
}

func (q *queueing) AcquireWait(ctx context.Context, r leasehold.AcquireRequest) (leasehold.Grant, error) {
	for {
		g, err := q.Store.Acquire(ctx, r)
		if !errors.Is(err, leasehold.ErrHeld) {
			return g, err
		}
		select {
		case <-ctx.Done():
			return leasehold.Grant{}, ctx.Err()
		case <-time.After(5 * time.Millisecond):
		}
	}
}

func (q *queueing) Renew(ctx context.Context, g leasehold.Grant) (leasehold.Grant, error) {
	q.renews.Add(1)
	return q.Store.Renew(ctx, g)
}

func TestWaitLongerThanTTLOnWaiterStore(t *testing.T) {
	q := &queueing{Store: memory.New(nil)}
	c := newClient(t, q, nil)
	ttl := 300 * time.Millisecond
	holder, err := c.Acquire(context.Background(), "k", leasehold.AcquireOptions{TTL: ttl})
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		time.Sleep(3 * ttl)
		_ = holder.Release(context.Background())
	}()
	// The wait outlasts the TTL several times over; the grant must still
	// be a held lease, with a deadline anchored after the grant.
	before := time.Now()
	l, err := c.Acquire(context.Background(), "k", leasehold.AcquireOptions{TTL: ttl, Wait: time.Minute})
	if err != nil {
		t.Fatalf("waiter on a Waiter store: %v", err)
	}
	defer l.Release(context.Background())
	if !l.Deadline().After(before.Add(3 * ttl)) {
		t.Errorf("deadline %v anchored before the grant (wait began %v)", l.Deadline(), before)
	}
}

// recordingBackoff always asks for a long pause, so only the caps in
// retryDelay can make a waiter look sooner.
type recordingBackoff struct{}

func (recordingBackoff) Delay(int) time.Duration { return time.Hour }

func TestWaiterFindsExpiredLeaseWithoutLongBackoff(t *testing.T) {
	st := memory.New(nil)
	c := newClient(t, st, &leasehold.Options{Backoff: recordingBackoff{}})
	// A holder that dies: its grant is never renewed or released.
	if _, err := st.Acquire(context.Background(), leasehold.AcquireRequest{Key: "k", Owner: "dead", TTL: 300 * time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	// Expiry sends no notification; with an hour of backoff only the caps
	// (the holder's remaining time, a third of the TTL) get the waiter in.
	l, err := c.Acquire(context.Background(), "k", leasehold.AcquireOptions{TTL: time.Minute, Wait: 20 * time.Second})
	if err != nil {
		t.Fatalf("waiter on an expired lease: %v", err)
	}
	_ = l.Release(context.Background())
}
