package leasehold_test

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/fence"
	"github.com/leasehold-go/leasehold/memory"
)

// The lease's context is made on first use; made before or after the lease
// ends, it is the same context: cancelled with the cause the lease ended
// with, carrying the token and the acquire's values, not the acquire's
// cancellation.
func TestLeaseContextMadeOnFirstUse(t *testing.T) {
	type ctxKey struct{}
	c := newClient(t, memory.New(nil), nil)
	actx, cancel := context.WithCancel(context.WithValue(context.Background(), ctxKey{}, "v"))
	for _, early := range []bool{true, false} {
		l, err := c.Acquire(actx, "k", leasehold.AcquireOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var ctx context.Context
		if early {
			ctx = l.Context()
			if ctx.Err() != nil || l.Err() != nil {
				t.Fatalf("early: held lease's context ended: %v, %v", ctx.Err(), l.Err())
			}
		}
		if err := l.Release(context.Background()); err != nil {
			t.Fatal(err)
		}
		if !early {
			ctx = l.Context()
		}
		select {
		case <-l.Done():
		default:
			t.Errorf("early %v: Done not closed after the release", early)
		}
		if l.Context() != ctx {
			t.Errorf("early %v: Context returned another context", early)
		}
		if cause := context.Cause(ctx); !errors.Is(cause, leasehold.ErrReleased) || !errors.Is(l.Err(), leasehold.ErrReleased) {
			t.Errorf("early %v: cause %v, Err %v, want ErrReleased", early, cause, l.Err())
		}
		if tok, ok := fence.TokenFrom(ctx); !ok || tok != l.Token() {
			t.Errorf("early %v: token %d, %v in the context, want %d", early, tok, ok, l.Token())
		}
		if ctx.Value(ctxKey{}) != "v" {
			t.Errorf("early %v: the acquire's value is missing", early)
		}
	}
	l, err := c.Acquire(actx, "k", leasehold.AcquireOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	if err := l.Context().Err(); err != nil {
		t.Errorf("the acquire's cancellation ended the lease's context: %v", err)
	}
	// Context, Done and Err race with Release (for -race).
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			_ = l.Context()
			<-l.Done()
			if !errors.Is(l.Err(), leasehold.ErrReleased) {
				t.Errorf("Err after Done: %v", l.Err())
			}
		})
	}
	if err := l.Release(context.Background()); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
}

// releaseSpy records the context of every Release and runs hook with it.
type releaseSpy struct {
	leasehold.Store
	mu   sync.Mutex
	ctxs []context.Context
	hook func(ctx context.Context) error
}

func (s *releaseSpy) Release(ctx context.Context, g leasehold.Grant) error {
	s.mu.Lock()
	s.ctxs = append(s.ctxs, ctx)
	hook := s.hook
	s.mu.Unlock()
	if hook != nil {
		if err := hook(ctx); err != nil {
			return err
		}
	}
	return s.Store.Release(ctx, g)
}

// A release runs on a context with the caller's values but not its
// cancellation, whose deadline is no more than ReleaseTimeout away and no
// less than 63/64 of it (releases share deadline contexts), and which ends
// at that deadline, with the contexts a store derives from it.
func TestReleaseContextBoundedByReleaseTimeout(t *testing.T) {
	type ctxKey struct{}
	spy := &releaseSpy{Store: memory.New(nil)}
	rt := 200 * time.Millisecond
	c := newClient(t, spy, &leasehold.Options{ReleaseTimeout: rt})
	for i, ctx := range []context.Context{context.Background(), context.WithValue(context.Background(), ctxKey{}, "v")} {
		l, err := c.Acquire(context.Background(), "k", leasehold.AcquireOptions{})
		if err != nil {
			t.Fatal(err)
		}
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		before := time.Now()
		if err := l.Release(cctx); err != nil {
			t.Fatal(err)
		}
		after := time.Now()
		rctx := spy.ctxs[len(spy.ctxs)-1]
		d, ok := rctx.Deadline()
		if !ok || d.After(after.Add(rt)) || d.Before(before.Add(rt-rt/64)) {
			t.Errorf("release %d: deadline %v, %v; want within [%v, %v]", i, d, ok, before.Add(rt-rt/64), after.Add(rt))
		}
		if rctx.Err() != nil {
			t.Errorf("release %d: the caller's cancellation reached the release: %v", i, rctx.Err())
		}
		if i == 1 && rctx.Value(ctxKey{}) != "v" {
			t.Errorf("release %d: the caller's value is missing", i)
		}
	}
	// A store that waits for its context is cut off at the deadline, and
	// so is a context it derives.
	spy.mu.Lock()
	spy.hook = func(ctx context.Context) error {
		child, cancel := context.WithCancel(ctx)
		defer cancel()
		<-child.Done()
		return child.Err()
	}
	spy.mu.Unlock()
	l, err := c.Acquire(context.WithValue(context.Background(), ctxKey{}, "v"), "k", leasehold.AcquireOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Release(context.WithValue(context.Background(), ctxKey{}, "v")); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("release on a store that waits for its context: %v, want DeadlineExceeded", err)
	}
}

// A Client's acquire+release cycle on the memory store allocates the lease
// and its owner id, and nothing more while nobody asks for the lease's
// context: before, its context (three allocations) and the release's
// timeout (four) came on every cycle (9 in all), and at 64 goroutines the
// client's work per cycle is a part of what bounds the throughput
// (redis/bench BenchmarkCPU64).
//
// The lease is 448 bytes (its MinHold event, used by few, is allocated
// apart): the bytes allocated per cycle set how often the collector runs.
func TestClientCycleAllocations(t *testing.T) {
	c := newClient(t, memory.New(nil), nil)
	ctx := context.Background()
	cycle := func() {
		l, err := c.Acquire(ctx, "k", leasehold.AcquireOptions{TTL: time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		if err := l.Release(ctx); err != nil {
			t.Fatal(err)
		}
	}
	// At most one more than the two, for the scheduler's own work (a
	// timer when it is woken).
	if got := testing.AllocsPerRun(1000, cycle); got > 3 {
		t.Errorf("a cycle allocates %.0f times, want at most 3", got)
	}
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	const n = 1000
	for range n {
		cycle()
	}
	runtime.ReadMemStats(&m1)
	if b := (m1.TotalAlloc - m0.TotalAlloc) / n; b > 512 {
		t.Errorf("a cycle allocates %d bytes, want at most 512 (the lease, its owner id)", b)
	}
}
