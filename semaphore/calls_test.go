package semaphore_test

import (
	"context"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/memory"
	"github.com/leasehold-go/leasehold/semaphore"
)

// attemptCounter is store middleware that counts Acquire attempts.
type attemptCounter struct {
	leasehold.Store
	mu sync.Mutex
	n  int
}

func (c *attemptCounter) Acquire(ctx context.Context, req leasehold.AcquireRequest) (leasehold.Grant, error) {
	c.mu.Lock()
	c.n++
	c.mu.Unlock()
	return c.Store.Acquire(ctx, req)
}

func (c *attemptCounter) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n
}

// counted returns a client over st whose store attempts are counted; the
// counting wrapper keeps st's notifications.
func counted(t *testing.T, st leasehold.Store, opts *leasehold.Options) (*leasehold.Client, *attemptCounter) {
	t.Helper()
	cnt := &attemptCounter{Store: st}
	c, err := leasehold.New(leasehold.WrapStore(st, cnt), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c, cnt
}

// holdSlots takes the given slots of key through another client.
func holdSlots(t *testing.T, c *leasehold.Client, key string, slots ...int) map[int]*leasehold.Lease {
	t.Helper()
	held := map[int]*leasehold.Lease{}
	for _, i := range slots {
		l, err := c.Acquire(context.Background(), semaphore.SlotKey(key, i), leasehold.AcquireOptions{TTL: time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		held[i] = l
	}
	return held
}

// A holder that cycles on a semaphore whose other slots are all held finds
// its slot again in one store attempt (the slot its last permit released),
// as a plain lease cycle would: not by trying the held slots in a random
// order, one round trip each.
func TestCycleFindsItsReleasedSlotInOneAttempt(t *testing.T) {
	st := memory.New(nil)
	holdSlots(t, client(t, st), "jobs", 0, 1, 2, 3, 4, 5, 6, 8, 9)
	c, cnt := counted(t, st, nil)
	s := sem(t, c, 10)
	ctx := context.Background()
	for cycle := range 20 {
		before := cnt.count()
		p, err := s.Acquire(ctx, "jobs", leasehold.AcquireOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if p.Slot() != 7 {
			t.Fatalf("cycle %d: slot %d granted, want 7 (the only free one)", cycle, p.Slot())
		}
		if err := p.Release(ctx); err != nil {
			t.Fatal(err)
		}
		if n := cnt.count() - before; cycle > 0 && n != 1 {
			t.Fatalf("cycle %d: %d store attempts, want 1 (slot 7, released by the cycle before)", cycle, n)
		}
		// A cycle on another key between two on "jobs" does not make the
		// Semaphore forget the slot "jobs" released.
		q, err := s.Acquire(ctx, "other", leasehold.AcquireOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if err := q.Release(ctx); err != nil {
			t.Fatal(err)
		}
	}
}

// A waiter woken by a release tries the slot announced free, not every
// slot: the others were held at its last round, and their releases would
// be announced too. So a release costs each waiter one attempt.
func TestWokenWaiterTriesTheReleasedSlot(t *testing.T) {
	st := memory.New(nil)
	const n = 4
	holder := client(t, st)
	held := holdSlots(t, holder, "pool", 0, 1, 2, 3)
	// A backoff far beyond the test, so that only the release wakes the
	// waiter (its next timed round, a third of the TTL away, never comes).
	c, cnt := counted(t, st, &leasehold.Options{TTL: time.Minute, Backoff: leasehold.ExpBackoff{Base: time.Hour, Cap: time.Hour}})
	s := sem(t, c, n)
	ctx := context.Background()
	for rep := range 8 {
		before := cnt.count()
		got := make(chan *semaphore.Permit, 1)
		errc := make(chan error, 1)
		go func() {
			p, err := s.Acquire(ctx, "pool", leasehold.AcquireOptions{Wait: leasehold.WaitForever})
			if err != nil {
				errc <- err
				return
			}
			got <- p
		}()
		for cnt.count() < before+n { // its first round: every slot held
			time.Sleep(time.Millisecond)
		}
		before = cnt.count()
		k := rand.IntN(n)
		if err := held[k].Release(ctx); err != nil {
			t.Fatal(err)
		}
		var p *semaphore.Permit
		select {
		case p = <-got:
		case err := <-errc:
			t.Fatal(err)
		case <-time.After(time.Minute):
			t.Fatalf("rep %d: the waiter was not granted slot %d", rep, k)
		}
		if p.Slot() != k {
			t.Fatalf("rep %d: slot %d granted, want %d", rep, p.Slot(), k)
		}
		if a := cnt.count() - before; a != 1 {
			t.Fatalf("rep %d: %d attempts after slot %d was released, want 1", rep, a, k)
		}
		if err := p.Release(ctx); err != nil {
			t.Fatal(err)
		}
		held[k] = holdSlots(t, holder, "pool", k)[k]
	}
}
