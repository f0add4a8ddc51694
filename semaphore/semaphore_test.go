package semaphore_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/memory"
	"github.com/leasehold-go/leasehold/semaphore"
)

// unsafeStore is a memory store that says its tokens are not fences.
type unsafeStore struct{ *memory.Store }

func (unsafeStore) Info() leasehold.Info {
	return leasehold.Info{Name: "unsafe", MaxTTL: leasehold.MaxTTL, TokenCaveat: "a failover can reuse tokens."}
}

func client(t *testing.T, st leasehold.Store) *leasehold.Client {
	t.Helper()
	c, err := leasehold.New(st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func sem(t *testing.T, c *leasehold.Client, n int) *semaphore.Semaphore {
	t.Helper()
	s, err := semaphore.New(c, n, nil)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestNewRefuses(t *testing.T) {
	mem := memory.New(nil)
	for _, tc := range []struct {
		name string
		st   leasehold.Store
		n    int
		opts *semaphore.Options
		want error // nil: accepted
		msg  string
	}{
		{"zero slots", mem, 0, nil, semaphore.ErrInvalidSlots, "0 slots"},
		{"negative slots", mem, -3, nil, semaphore.ErrInvalidSlots, "-3 slots"},
		{"too many slots", mem, semaphore.MaxSlots + 1, nil, semaphore.ErrInvalidSlots, "want 1 to 1024"},
		{"one slot", mem, 1, nil, nil, ""},
		{"most slots", mem, semaphore.MaxSlots, nil, nil, ""},
		{"unsafe tokens", unsafeStore{mem}, 2, nil, semaphore.ErrUnsafeTokens, "a failover can reuse tokens (set Options.AllowUnsafeTokens"},
		{"unsafe tokens allowed", unsafeStore{mem}, 2, &semaphore.Options{AllowUnsafeTokens: true}, nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := semaphore.New(client(t, tc.st), tc.n, tc.opts)
			if !errors.Is(err, tc.want) || (tc.want == nil) != (err == nil) {
				t.Fatalf("got %v, want %v", err, tc.want)
			}
			if err != nil && !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("error %q does not say %q", err, tc.msg)
			}
		})
	}
}

func TestKeyBounds(t *testing.T) {
	c := client(t, memory.New(nil))
	for _, tc := range []struct {
		name   string
		n, len int
		ok     bool
	}{
		{"one slot fits", 1, leasehold.MaxKeyLen - len("/slot/0"), true},
		{"one slot one byte over", 1, leasehold.MaxKeyLen - len("/slot/0") + 1, false},
		{"ten slots fit", 10, leasehold.MaxKeyLen - len("/slot/9"), true},
		{"eleven slots need a digit more", 11, leasehold.MaxKeyLen - len("/slot/9"), false},
		{"empty", 2, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := sem(t, c, tc.n).Acquire(context.Background(), strings.Repeat("k", tc.len), leasehold.AcquireOptions{})
			if tc.ok {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				_ = p.Release(context.Background())
				return
			}
			if !errors.Is(err, leasehold.ErrInvalidKey) {
				t.Fatalf("got %v, want ErrInvalidKey", err)
			}
			if tc.len > 0 && !strings.Contains(err.Error(), "slot keys") {
				t.Errorf("error %q does not name the slot keys", err)
			}
		})
	}
}

func TestFullThenReleaseFrees(t *testing.T) {
	ctx := context.Background()
	s := sem(t, client(t, memory.New(nil)), 3)
	seen := map[int]bool{}
	var permits []*semaphore.Permit
	for range 3 {
		p, err := s.Acquire(ctx, "jobs", leasehold.AcquireOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if seen[p.Slot()] || p.Key() != semaphore.SlotKey("jobs", p.Slot()) || p.Semaphore() != "jobs" || p.Slots() != 3 {
			t.Fatalf("permit slot %d key %q sem %q of %d; slots seen %v", p.Slot(), p.Key(), p.Semaphore(), p.Slots(), seen)
		}
		seen[p.Slot()] = true
		permits = append(permits, p)
	}
	_, err := s.Acquire(ctx, "jobs", leasehold.AcquireOptions{})
	var fe *semaphore.FullError
	if !errors.As(err, &fe) || !errors.Is(err, leasehold.ErrHeld) {
		t.Fatalf("fourth acquire: got %v, want a FullError matching ErrHeld", err)
	}
	if !strings.Contains(err.Error(), `"jobs": all 3 slots are held: slot 0`) {
		t.Errorf("error %q does not say the slots are held", err)
	}
	if err := permits[1].Release(ctx); err != nil {
		t.Fatal(err)
	}
	p, err := s.Acquire(ctx, "jobs", leasehold.AcquireOptions{})
	if err != nil {
		t.Fatalf("acquire after a release: %v", err)
	}
	if p.Slot() != permits[1].Slot() || p.Token() <= permits[1].Token() {
		t.Errorf("got slot %d token %d, want the released slot %d with a token above %d", p.Slot(), p.Token(), permits[1].Slot(), permits[1].Token())
	}
}

func TestWaiterGetsReleasedSlot(t *testing.T) {
	ctx := context.Background()
	s := sem(t, client(t, memory.New(nil)), 2)
	a, _ := s.Acquire(ctx, "k", leasehold.AcquireOptions{})
	b, err := s.Acquire(ctx, "k", leasehold.AcquireOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan *semaphore.Permit)
	go func() {
		p, err := s.Acquire(ctx, "k", leasehold.AcquireOptions{Wait: leasehold.WaitForever})
		if err != nil {
			t.Error(err)
		}
		got <- p
	}()
	_ = b.Release(ctx)
	p := <-got
	if p == nil || p.Slot() != b.Slot() {
		t.Fatalf("the waiter got %v, want slot %d", p, b.Slot())
	}
	_ = a.Release(ctx)
}

func TestWaitRunsOut(t *testing.T) {
	ctx := context.Background()
	s := sem(t, client(t, memory.New(nil)), 1)
	if _, err := s.Acquire(ctx, "k", leasehold.AcquireOptions{}); err != nil {
		t.Fatal(err)
	}
	_, err := s.Acquire(ctx, "k", leasehold.AcquireOptions{Wait: 30 * time.Millisecond})
	var fe *semaphore.FullError
	if !errors.As(err, &fe) || fe.Held[0] == nil {
		t.Fatalf("got %v, want a FullError naming slot 0's holder", err)
	}
	cctx, cancel := context.WithCancel(ctx)
	time.AfterFunc(20*time.Millisecond, cancel)
	if _, err := s.Acquire(cctx, "k", leasehold.AcquireOptions{Wait: leasehold.WaitForever}); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled wait: got %v, want context.Canceled", err)
	}
	if _, err := s.Acquire(ctx, "k", leasehold.AcquireOptions{Wait: -1}); !errors.Is(err, leasehold.ErrInvalidWait) {
		t.Fatalf("negative wait: got %v", err)
	}
}

func TestCrashedHolderSlotFreesAtTTL(t *testing.T) {
	st := memory.New(nil)
	ctx := context.Background()
	// A holder that crashed: granted, never renewed, never released.
	_, err := st.Acquire(ctx, leasehold.AcquireRequest{Key: semaphore.SlotKey("k", 0), Owner: leasehold.NewOwnerID(), TTL: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	s := sem(t, client(t, st), 1)
	p, err := s.Acquire(ctx, "k", leasehold.AcquireOptions{Wait: leasehold.WaitForever})
	if err != nil || p.Slot() != 0 {
		t.Fatalf("got %v, %v; want slot 0 once the crashed holder's TTL ended", p, err)
	}
}

func TestSizeMismatchRefused(t *testing.T) {
	st := memory.New(nil)
	ctx := context.Background()
	big, small := sem(t, client(t, st), 3), sem(t, client(t, st.Reopen()), 2)
	for range 3 {
		if _, err := big.Acquire(ctx, "k", leasehold.AcquireOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	_, err := small.Acquire(ctx, "k", leasehold.AcquireOptions{Wait: time.Second})
	var se *semaphore.SizeError
	if !errors.As(err, &se) || !errors.Is(err, semaphore.ErrSizeMismatch) || se.Holder.Key != semaphore.SlotKey("k", 2) {
		t.Fatalf("got %v, want a SizeError naming slot 2", err)
	}
	if !strings.Contains(err.Error(), "has 2 slots, but slot 2") {
		t.Errorf("error %q does not explain", err)
	}
}

func TestNeverMoreThanN(t *testing.T) {
	const n, contenders, rounds = 3, 10, 5
	st := memory.New(nil)
	var holding, most atomic.Int32
	var wg sync.WaitGroup
	for range contenders {
		s := sem(t, client(t, st.Reopen()), n)
		wg.Go(func() {
			for range rounds {
				p, err := s.Acquire(context.Background(), "k", leasehold.AcquireOptions{Wait: leasehold.WaitForever})
				if err != nil {
					t.Error(err)
					return
				}
				h := holding.Add(1)
				for m := most.Load(); h > m && !most.CompareAndSwap(m, h); m = most.Load() {
				}
				time.Sleep(time.Millisecond)
				holding.Add(-1)
				_ = p.Release(context.Background())
			}
		})
	}
	wg.Wait()
	if most.Load() > n {
		t.Fatalf("%d holders at once, want at most %d", most.Load(), n)
	}
}

// lateStore is a memory store whose first grant reaches its client already
// expired by the holder's clock (TTL 1ns), as a grant slowed past its TTL.
type lateStore struct {
	*memory.Store
	late atomic.Bool
}

func (s *lateStore) Acquire(ctx context.Context, r leasehold.AcquireRequest) (leasehold.Grant, error) {
	g, err := s.Store.Acquire(ctx, r)
	if err == nil && s.late.CompareAndSwap(false, true) {
		g.TTL = time.Nanosecond
	}
	return g, err
}

// A grant lost on arrival is one slot's failed attempt: a waiting Acquire
// goes on to another slot (or tries again) instead of failing.
func TestWaitOutlastsGrantLostOnArrival(t *testing.T) {
	st := &lateStore{Store: memory.New(nil)}
	s := sem(t, client(t, st), 2)
	p, err := s.Acquire(context.Background(), "k", leasehold.AcquireOptions{Wait: leasehold.WaitForever})
	if err != nil {
		t.Fatalf("got %v, want a permit after the lost grant", err)
	}
	if !st.late.Load() {
		t.Fatal("the store never sent its late grant")
	}
	_ = p.Release(context.Background())
	if _, err := sem(t, client(t, &lateStore{Store: memory.New(nil)}), 1).Acquire(context.Background(), "k", leasehold.AcquireOptions{}); !errors.Is(err, leasehold.ErrLost) {
		t.Fatalf("a try without a wait: got %v, want the lost grant's error", err)
	}
}

// A waiter on a store that notifies is woken by the release of any slot,
// not by its backoff: here the backoff is an hour, so only the
// notification can bring it back within the test's (generous) bound.
func TestWaiterWokenByNotification(t *testing.T) {
	ctx := context.Background()
	c, err := leasehold.New(memory.New(nil), &leasehold.Options{TTL: time.Hour, Backoff: leasehold.ConstBackoff(time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	s := sem(t, c, 3)
	var held []*semaphore.Permit
	for range 3 {
		p, err := s.Acquire(ctx, "k", leasehold.AcquireOptions{})
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, p)
	}
	got := make(chan error, 1)
	go func() {
		wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		p, err := s.Acquire(wctx, "k", leasehold.AcquireOptions{Wait: leasehold.WaitForever})
		if err == nil && p.Slot() != held[2].Slot() {
			err = errors.New("got another slot than the released one")
		}
		got <- err
	}()
	time.Sleep(20 * time.Millisecond) // let the waiter try once and pause; a release before is fine too
	_ = held[2].Release(ctx)
	if err := <-got; err != nil {
		t.Fatalf("the waiter was not handed the released slot: %v", err)
	}
}
