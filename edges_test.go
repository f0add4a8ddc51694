package leasehold_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/fence"
	"github.com/leasehold-go/leasehold/memory"
)

// The tests in this file pin the lifecycle's edges: what a holder sees when
// callbacks block, clocks run past a deadline before a timer fires, renewals
// hang or a batch fails for one grant, and what each store attempt of one
// waiting acquire carries.

// eventLog is a list of strings that goroutines append to.
type eventLog struct {
	mu     sync.Mutex
	events []string
}

func (e *eventLog) record(s string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.events = append(e.events, s)
}

func (e *eventLog) seen() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]string(nil), e.events...)
}

func (e *eventLog) reset() {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.events = nil
}

// owners records the owner id of every store attempt.
type owners struct {
	leasehold.Store
	eventLog
}

func (o *owners) Acquire(ctx context.Context, r leasehold.AcquireRequest) (leasehold.Grant, error) {
	o.record(r.Owner)
	return o.Store.Acquire(ctx, r)
}

// Subscribe passes the memory store's release notices on.
func (o *owners) Subscribe(ctx context.Context, key string) (<-chan struct{}, func(), error) {
	return o.Store.(leasehold.Notifier).Subscribe(ctx, key)
}

// queuedOwners is owners over a Waiter store whose first failures are
// store failures.
type queuedOwners struct {
	*owners
	q     *queueing
	fails atomic.Int64
}

func (w *queuedOwners) AcquireWait(ctx context.Context, r leasehold.AcquireRequest) (leasehold.Grant, error) {
	w.record(r.Owner)
	if w.fails.Add(-1) >= 0 {
		return leasehold.Grant{}, &leasehold.StoreError{Store: "queued", Op: "acquire", Err: errors.New("etcdserver: leader changed")}
	}
	return w.q.AcquireWait(ctx, r)
}

func distinct(t *testing.T, ids []string, granted string) {
	t.Helper()
	if len(ids) < 2 {
		t.Fatalf("only %d store attempts; the test needs retries", len(ids))
	}
	seen := map[string]bool{}
	for _, id := range ids {
		if seen[id] {
			t.Fatalf("owner id %q used by two store attempts of one acquire (%d attempts): a clean-up of the first could remove the second's grant", id, len(ids))
		}
		seen[id] = true
	}
	if ids[len(ids)-1] != granted {
		t.Errorf("the lease's owner %q is not the last attempt's %q", granted, ids[len(ids)-1])
	}
}

func TestEveryWaitingAttemptHasItsOwnOwnerID(t *testing.T) {
	st := &owners{Store: memory.New(nil)}
	c := newClient(t, st, &leasehold.Options{Backoff: leasehold.ConstBackoff(time.Millisecond)})
	holder, err := c.Acquire(context.Background(), "k", leasehold.AcquireOptions{TTL: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	st.reset()
	go func() {
		for len(st.seen()) < 3 {
			time.Sleep(time.Millisecond)
		}
		_ = holder.Release(context.Background())
	}()
	l, err := c.Acquire(context.Background(), "k", leasehold.AcquireOptions{Wait: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release(context.Background())
	distinct(t, st.seen(), l.Owner())
}

func TestAttemptAfterAWakeUpHasItsOwnOwnerID(t *testing.T) {
	st := &owners{Store: memory.New(nil)}
	// Backoff far longer than the test: only the release notice (the
	// memory store is a Notifier) brings the second attempt.
	c := newClient(t, st, &leasehold.Options{Backoff: recordingBackoff{}})
	holder, err := c.Acquire(context.Background(), "k", leasehold.AcquireOptions{TTL: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	st.reset()
	go func() {
		for len(st.seen()) < 1 {
			time.Sleep(time.Millisecond)
		}
		_ = holder.Release(context.Background())
	}()
	l, err := c.Acquire(context.Background(), "k", leasehold.AcquireOptions{TTL: time.Minute, Wait: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release(context.Background())
	distinct(t, st.seen(), l.Owner())
}

func TestWaiterStoreRetriesStoreFailuresWithFreshOwners(t *testing.T) {
	mem := memory.New(nil)
	w := &queuedOwners{owners: &owners{Store: mem}, q: &queueing{Store: mem}}
	w.fails.Store(2)
	c := newClient(t, w, &leasehold.Options{Backoff: leasehold.ConstBackoff(time.Millisecond)})
	l, err := c.Acquire(context.Background(), "k", leasehold.AcquireOptions{Wait: time.Minute})
	if err != nil {
		t.Fatalf("a queued wait gave up at a store failure: %v", err)
	}
	defer l.Release(context.Background())
	distinct(t, w.seen(), l.Owner())

	// A store that keeps failing ends the wait with its failure.
	w.fails.Store(1 << 40)
	_, err = c.Acquire(context.Background(), "k2", leasehold.AcquireOptions{Wait: 50 * time.Millisecond})
	if !errors.Is(err, leasehold.ErrStore) {
		t.Fatalf("queued wait over a failing store: got %v, want ErrStore", err)
	}
}

func TestBlockingJeopardyCallbackDoesNotDelayTheDeadline(t *testing.T) {
	f := &faulty{Store: memory.New(nil), renewErr: &leasehold.StoreError{Store: "test", Op: "renew", Err: errors.New("connection reset")}}
	unblock := make(chan struct{})
	defer close(unblock)
	var calls atomic.Int64
	c := newClient(t, f, &leasehold.Options{OnJeopardy: func(leasehold.Jeopardy) {
		calls.Add(1)
		<-unblock // a write to a stalled stderr pipe
	}})
	l, err := c.Acquire(context.Background(), "k", leasehold.AcquireOptions{TTL: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-l.Done():
	case <-time.After(10 * time.Second):
		t.Fatalf("lease context still live 10 s after its deadline %v while the jeopardy callback blocks", l.Deadline())
	}
	if !errors.Is(l.Err(), leasehold.ErrExpired) {
		t.Errorf("cause = %v, want ErrExpired", l.Err())
	}
	if calls.Load() == 0 {
		t.Error("the jeopardy callback was never called")
	}
}

func TestReleaseFromJeopardyCallback(t *testing.T) {
	f := &faulty{Store: memory.New(nil), renewErr: &leasehold.StoreError{Store: "test", Op: "renew", Err: errors.New("connection reset")}}
	var lease atomic.Pointer[leasehold.Lease]
	released := make(chan error, 1)
	var once sync.Once
	// Not newClient: after a deadlock, closing the client would hang too.
	c, err := leasehold.New(f, &leasehold.Options{OnJeopardy: func(leasehold.Jeopardy) {
		if l := lease.Load(); l != nil {
			once.Do(func() { released <- l.Release(context.Background()) })
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	l, err := c.Acquire(context.Background(), "k", leasehold.AcquireOptions{TTL: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	lease.Store(l)
	select {
	case err := <-released:
		if err != nil {
			t.Errorf("Release from the callback: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Release called from the jeopardy callback did not return (deadlock)")
	}
	_ = c.Close()
	if !errors.Is(l.Err(), leasehold.ErrReleased) {
		t.Errorf("cause = %v, want ErrReleased", l.Err())
	}
}

func TestDoHandsTheWorkTheFencingToken(t *testing.T) {
	c := newClient(t, memory.New(nil), nil)
	err := c.Do(context.Background(), "k", leasehold.AcquireOptions{}, func(ctx context.Context, l *leasehold.Lease) error {
		tok, ok := fence.TokenFrom(ctx)
		if !ok || tok != l.Token() {
			t.Errorf("fence.TokenFrom(work ctx) = %d, %v; want the lease's token %d", tok, ok, l.Token())
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// skewed is the system clock shifted by a settable offset; its timers run
// on real time, so the lease's deadline timer has not fired when Now is
// already past the deadline (as for a goroutine that has not woken yet).
type skewed struct{ off atomic.Int64 }

func (s *skewed) Now() time.Time { return time.Now().Add(time.Duration(s.off.Load())) }
func (s *skewed) NewTimer(d time.Duration) leasehold.Timer {
	return leasehold.SystemClock().NewTimer(d)
}

func TestCheckpointJudgesByTheClock(t *testing.T) {
	clk := &skewed{}
	c := newClient(t, memory.New(nil), &leasehold.Options{Clock: clk})
	l, err := c.Acquire(context.Background(), "k", leasehold.AcquireOptions{TTL: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release(context.Background())
	if err := l.Checkpoint(0); err != nil {
		t.Fatalf("Checkpoint(0) on a fresh lease: %v", err)
	}
	clk.off.Store(int64(2 * time.Minute)) // past the deadline; the timer sleeps on
	if err := l.Checkpoint(0); !errors.Is(err, leasehold.ErrExpired) || !errors.Is(err, leasehold.ErrLost) {
		t.Errorf("Checkpoint(0) after the deadline = %v, want a *LostError wrapping ErrExpired", err)
	}
	if r := l.Remaining(); r != 0 {
		t.Errorf("Remaining after the deadline = %s, want 0", r)
	}
}

// hangsFirst hangs its first renewal until the attempt's context ends, then
// renews normally.
type hangsFirst struct {
	*memory.Store
	renews atomic.Int64
}

func (h *hangsFirst) Renew(ctx context.Context, g leasehold.Grant) (leasehold.Grant, error) {
	if h.renews.Add(1) == 1 {
		<-ctx.Done()
		return leasehold.Grant{}, ctx.Err()
	}
	return h.Store.Renew(ctx, g)
}

func TestHungRenewalLeavesTimeForAnother(t *testing.T) {
	h := &hangsFirst{Store: memory.New(nil)}
	c := newClient(t, h, nil)
	l, err := c.Acquire(context.Background(), "k", leasehold.AcquireOptions{TTL: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release(context.Background())
	first := l.Deadline()
	for l.Deadline().Equal(first) {
		select {
		case <-l.Done():
			t.Fatalf("lost after %d renewal attempts: one hung attempt used up the time left (%v)", h.renews.Load(), l.Err())
		case <-time.After(5 * time.Millisecond):
		}
	}
	if n := h.renews.Load(); n < 2 {
		t.Errorf("deadline moved after %d attempts", n)
	}
}

// batchFailsOne renews in batches and fails the grant of key "bad" in the
// first batch only; it records the order of batch calls and lone renewals
// of "bad".
type batchFailsOne struct {
	*memory.Store
	eventLog
}

func (b *batchFailsOne) Renew(ctx context.Context, g leasehold.Grant) (leasehold.Grant, error) {
	if g.Key == "bad" {
		b.record("renew bad")
	}
	return b.Store.Renew(ctx, g)
}

func (b *batchFailsOne) RenewMany(ctx context.Context, gs []leasehold.Grant) ([]leasehold.RenewResult, error) {
	b.mu.Lock()
	n := 0
	for _, e := range b.events {
		if e == "batch" {
			n++
		}
	}
	b.events = append(b.events, "batch")
	b.mu.Unlock()
	out := make([]leasehold.RenewResult, len(gs))
	for i, g := range gs {
		if g.Key == "bad" && n == 0 {
			out[i].Err = &leasehold.StoreError{Store: "batch", Op: "renew", Err: errors.New("one shard timed out")}
			continue
		}
		out[i].Grant, out[i].Err = b.Store.Renew(ctx, g)
	}
	return out, nil
}

func TestFailedGrantOfABatchIsRetriedOnItsOwn(t *testing.T) {
	b := &batchFailsOne{Store: memory.New(nil)}
	c := newClient(t, b, nil)
	for _, k := range []string{"good", "bad"} {
		l, err := c.Acquire(context.Background(), k, leasehold.AcquireOptions{TTL: 3 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		defer l.Release(context.Background())
	}
	for {
		ev := b.seen()
		batches := 0
		for _, e := range ev {
			switch e {
			case "batch":
				batches++
			case "renew bad":
				if batches != 1 {
					t.Fatalf("the failed grant was retried alone only after %d batches: %v", batches, ev)
				}
				return
			}
		}
		if batches >= 2 {
			t.Fatalf("the failed grant waited for the next batch: %v", ev)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestRenewFractionThatCannotRenewInTimeIsRefused(t *testing.T) {
	for _, f := range []float64{0.51, 0.9, 0.99} {
		if _, err := leasehold.New(memory.New(nil), &leasehold.Options{RenewFraction: f}); err == nil {
			t.Errorf("RenewFraction %v accepted: its renewals come too late to retry before the deadline", f)
		}
	}
	if _, err := leasehold.New(memory.New(nil), &leasehold.Options{RenewFraction: 0.5}); err != nil {
		t.Errorf("RenewFraction 0.5 refused: %v", err)
	}
	// A TTL so short that the drift allowance leaves no time to renew.
	c := newClient(t, memory.New(nil), &leasehold.Options{RenewFraction: 0.5, Margin: 5 * time.Millisecond})
	if _, err := c.Acquire(context.Background(), "k", leasehold.AcquireOptions{TTL: 10 * time.Millisecond}); !errors.Is(err, leasehold.ErrInvalidTTL) {
		t.Errorf("TTL 10ms with a 5ms margin and renewals at half the TTL: got %v, want ErrInvalidTTL", err)
	}
}
