package zookeeper_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/fence"
	"github.com/leasehold-go/leasehold/internal/testserver"
)

// holders is the shared state of the failover test's workers: who holds
// the key by the workers' own account, and the tokens granted so far.
type holders struct {
	mu        sync.Mutex
	last      uint64
	current   map[int]*leasehold.Lease // worker -> the lease it is using
	problems  []string
	grants    atomic.Int64
	afterKill atomic.Int64 // grants with an accepted write after the kill
	killed    atomic.Bool
}

// granted records worker w's new lease l: its token must exceed every
// earlier one, and no other worker may still be using a live lease.
func (h *holders) granted(w int, l *leasehold.Lease) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if l.Token() <= h.last {
		h.problems = append(h.problems, fmt.Sprintf("token %d granted after %d", l.Token(), h.last))
	}
	h.last = max(h.last, l.Token())
	for o, ol := range h.current {
		if ol.Context().Err() == nil {
			h.problems = append(h.problems, fmt.Sprintf("worker %d got token %d while worker %d still held token %d", w, l.Token(), o, ol.Token()))
		}
	}
	h.current[w] = l
	h.grants.Add(1)
}

func (h *holders) done(w int) {
	h.mu.Lock()
	delete(h.current, w)
	h.mu.Unlock()
}

// TestLeaderKill kills the ensemble's leader while workers hold and wait
// for one key and write under it through a fence: tokens keep increasing,
// no two workers hold the key at once, no stale write is accepted, and the
// workers carry on under the new leader.
func TestLeaderKill(t *testing.T) {
	const (
		workers = 4
		ttl     = time.Second
	)
	z := testserver.NewZooKeeper(t, serverOpts(3))
	k := "failover/k"
	var reg fence.Register[int]
	h := &holders{current: map[int]*leasehold.Lease{}}
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	var wg sync.WaitGroup
	for w := range workers {
		st := openURL(t, z.URL("/failover"))
		defer st.Close()
		lc, err := leasehold.New(st, &leasehold.Options{Label: fmt.Sprintf("worker-%d", w)})
		if err != nil {
			t.Fatal(err)
		}
		defer lc.Close()
		wg.Go(func() { work(ctx, w, lc, k, ttl, h, &reg) })
	}
	eventually(t, 30*time.Second, "10 grants before the kill", func() bool { return h.grants.Load() >= 10 })
	lctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	leader, err := z.Leader(lctx)
	cancel()
	if err != nil {
		t.Fatal(err)
	}
	h.killed.Store(true)
	z.Kill(leader)
	t.Logf("killed leader %d after %d grants", leader, h.grants.Load())
	eventually(t, 60*time.Second, "5 grants with accepted writes after the leader kill", func() bool { return h.afterKill.Load() >= 5 })
	stop()
	wg.Wait()

	h.mu.Lock()
	defer h.mu.Unlock()
	for _, p := range h.problems {
		t.Error(p)
	}
	var prev uint64
	for _, w := range reg.History() {
		if w.Accepted && w.Token < prev {
			t.Errorf("register accepted token %d after %d", w.Token, prev)
		}
		if w.Accepted {
			prev = w.Token
		}
	}
	accepted, rejected := reg.Counts()
	t.Logf("%d grants; register: %d writes accepted, %d stale writes rejected", h.grants.Load(), accepted, rejected)
}

// work is one failover worker: acquire (waiting), write three times under
// the lease through the register, release; again until ctx ends.
func work(ctx context.Context, w int, lc *leasehold.Client, k string, ttl time.Duration, h *holders, reg *fence.Register[int]) {
	for ctx.Err() == nil {
		l, err := lc.Acquire(ctx, k, leasehold.AcquireOptions{TTL: ttl, Wait: 5 * time.Second})
		if err != nil {
			if ctx.Err() == nil && !errors.Is(err, leasehold.ErrHeld) {
				time.Sleep(20 * time.Millisecond)
			}
			continue
		}
		h.granted(w, l)
		wrote := false
		for i := 0; i < 3 && l.Context().Err() == nil; i++ {
			if reg.Write(l.Token(), i) == nil {
				wrote = true
			}
			time.Sleep(5 * time.Millisecond)
		}
		if wrote && h.killed.Load() {
			h.afterKill.Add(1)
		}
		h.done(w)
		_ = l.Release(context.Background())
	}
}

// eventually polls cond every 20 ms until it holds, failing t after limit.
func eventually(t *testing.T, limit time.Duration, what string, cond func() bool) {
	t.Helper()
	end := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(end) {
			t.Fatalf("not within %s: %s", limit, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
