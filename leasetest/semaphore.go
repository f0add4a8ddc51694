package leasetest

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/semaphore"
)

// The semaphore rules: the semaphore package over the store under test.

// semSlots is the rules' number of slots.
const semSlots = 3

// hold is one permit as its holder saw it.
type hold struct {
	who, slot  int
	token      uint64
	start, end time.Time // Acquire returned; Release called, or the holder's deadline if earlier
}

// semaphoreAtMostN checks that at most N holders hold a semaphore at a
// time, by the holders' deadlines, and that each slot's tokens increase
// from holder to holder: eight contenders, each with its own handle and
// client, wait for a permit of three slots, hold it briefly and release it,
// until twenty-four permits have been held.
// See docs/design.md#semaphores.
func (s *suite) semaphoreAtMostN(t *testing.T) {
	k := key(t, "sem")
	var workers []func(ctx context.Context, keep func(hold))
	for i := range 8 {
		sem := s.semaphore(t, semSlots)
		workers = append(workers, func(ctx context.Context, keep func(hold)) {
			for ctx.Err() == nil {
				p, err := sem.Acquire(ctx, k, leasehold.AcquireOptions{TTL: s.ttl, Wait: leasehold.WaitForever})
				if err != nil {
					if ctx.Err() == nil {
						t.Errorf("contender %d: acquire: %v", i, err)
					}
					return
				}
				h := hold{who: i, slot: p.Slot(), token: p.Token(), start: time.Now()}
				sleepCtx(p.Context(), 10*time.Millisecond)
				h.end = time.Now()
				if d := p.Deadline(); d.Before(h.end) {
					h.end = d
				}
				_ = p.Release(context.Background())
				keep(h)
			}
		})
	}
	holds := contend(t, 24, workers)
	if len(holds) < 24 {
		t.Fatalf("only %d permits held before the time limit", len(holds))
	}
	checkHolds(t, holds, semSlots, s.safeTokens(t))
}

// checkHolds reports more than n holds at once, a slot held twice at once,
// and (when tokens are fences) a slot's token that did not increase.
func checkHolds(t *testing.T, holds []hold, n int, fences bool) {
	t.Helper()
	slices.SortFunc(holds, func(a, b hold) int { return a.start.Compare(b.start) })
	for i, h := range holds {
		var at []string
		for _, o := range holds[:i] {
			if o.end.After(h.start) {
				at = append(at, fmt.Sprintf("contender %d on slot %d (token %d) until %s", o.who, o.slot, o.token, o.end.Format(time.StampMicro)))
			}
		}
		if len(at) >= n {
			t.Errorf("%d holders: contender %d took slot %d (token %d) at %s while %v", len(at)+1, h.who, h.slot, h.token, h.start.Format(time.StampMicro), at)
		}
	}
	last := map[int]hold{}
	for _, h := range holds {
		if p, ok := last[h.slot]; ok {
			if h.start.Before(p.end) {
				t.Errorf("slot %d held twice: contender %d from %s, contender %d until %s", h.slot, h.who, h.start.Format(time.StampMicro), p.who, p.end.Format(time.StampMicro))
			}
			if fences && h.token <= p.token {
				t.Errorf("slot %d: token %d after token %d", h.slot, h.token, p.token)
			}
		}
		last[h.slot] = h
	}
}

// semaphoreCrashedHolders checks that the slots of holders that crashed
// (granted, never renewed nor released) free when their TTLs end: all
// slots are granted on the store directly, and a waiting Acquire then gets
// one, with a token above the crashed holder's on that slot.
// See docs/design.md#semaphores.
func (s *suite) semaphoreCrashedHolders(t *testing.T) {
	k := key(t, "sem")
	st := s.open(t)
	crashed := map[int]uint64{}
	for i := range semSlots {
		g, err := st.Acquire(ctxT(t), req(semaphore.SlotKey(k, i), s.ttl))
		if err != nil {
			t.Fatalf("slot %d: %v", i, err)
		}
		crashed[i] = g.Token
	}
	ctx, cancel := context.WithTimeout(ctxT(t), 10*s.ttl+10*time.Second)
	defer cancel()
	p, err := s.semaphore(t, semSlots).Acquire(ctx, k, leasehold.AcquireOptions{TTL: s.ttl, Wait: leasehold.WaitForever})
	if err != nil {
		t.Fatalf("no slot after the crashed holders' TTLs: %v", err)
	}
	defer p.Release(context.Background())
	if s.safeTokens(t) && p.Token() <= crashed[p.Slot()] {
		t.Errorf("slot %d: token %d, not above the crashed holder's %d", p.Slot(), p.Token(), crashed[p.Slot()])
	}
}

// semaphore returns a semaphore of n slots over its own handle and client.
// It allows stores whose tokens are not fences: the rules check the bound
// on holders, and check tokens only where they are fences.
func (s *suite) semaphore(t *testing.T, n int) *semaphore.Semaphore {
	t.Helper()
	sem, err := semaphore.New(s.client(t, s.open(t), nil), n, &semaphore.Options{AllowUnsafeTokens: true})
	if err != nil {
		t.Fatalf("semaphore.New: %v", err)
	}
	return sem
}

// safeTokens reports whether the store's tokens are fences.
func (s *suite) safeTokens(t *testing.T) bool {
	t.Helper()
	st := s.open(t)
	return st.Info().SafeTokens
}
