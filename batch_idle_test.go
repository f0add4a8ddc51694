package leasehold

import (
	"context"
	"sync"
	"testing"
	"time"
)

// grantAll is a store that grants every acquire and renews everything, in
// batches too: the client's bookkeeping is what a test of it looks at.
type grantAll struct {
	mu  sync.Mutex
	tok uint64
}

func (s *grantAll) Acquire(_ context.Context, r AcquireRequest) (Grant, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tok++
	return Grant{Key: r.Key, Owner: r.Owner, Label: r.Label, Token: s.tok, TTL: r.TTL}, nil
}
func (s *grantAll) Renew(_ context.Context, g Grant) (Grant, error) { return g, nil }
func (s *grantAll) Release(context.Context, Grant) error            { return nil }
func (s *grantAll) Holder(context.Context, string) (Holder, error)  { return Holder{}, ErrNotHeld }
func (s *grantAll) Info() Info {
	return Info{Name: "grant-all", MinTTL: time.Millisecond, MaxTTL: MaxTTL, SafeTokens: true}
}
func (s *grantAll) Close() error { return nil }
func (s *grantAll) RenewMany(_ context.Context, gs []Grant) ([]RenewResult, error) {
	out := make([]RenewResult, len(gs))
	for i, g := range gs {
		out[i].Grant = g
	}
	return out, nil
}

// groupCount returns how many batch groups the client keeps, and how many
// of them have no members.
func (c *Client) groupCount() (all, idle int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.groups), c.idleGroupCount()
}

// A client acquiring and releasing in a loop reuses one batch group per
// TTL, keeps at most maxIdleGroups groups without members, and forgets them
// when its scheduler goes idle.
func TestIdleBatchGroupsAreBounded(t *testing.T) {
	c, err := New(&grantAll{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	cycle := func(ttl time.Duration) {
		l, err := c.Acquire(ctx, "k", AcquireOptions{TTL: ttl})
		if err != nil {
			t.Fatal(err)
		}
		if err := l.Release(ctx); err != nil {
			t.Fatal(err)
		}
	}
	for range 10 {
		cycle(time.Minute)
	}
	if all, idle := c.groupCount(); all != 1 || idle != 1 {
		t.Fatalf("after 10 cycles of one TTL: %d groups, %d idle; want 1 and 1", all, idle)
	}
	for i := range 3 * maxIdleGroups {
		cycle(time.Minute + time.Duration(i)*time.Second)
	}
	if all, idle := c.groupCount(); all != maxIdleGroups || idle != maxIdleGroups {
		t.Fatalf("after cycles of %d TTLs: %d groups, %d idle; want %d and %d", 3*maxIdleGroups, all, idle, maxIdleGroups, maxIdleGroups)
	}
	held, err := c.Acquire(ctx, "held", AcquireOptions{TTL: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if all, idle := c.groupCount(); all != maxIdleGroups || idle != maxIdleGroups-1 {
		t.Fatalf("a lease joined an idle group: %d groups, %d idle; want %d and %d", all, idle, maxIdleGroups, maxIdleGroups-1)
	}
	if err := held.Release(ctx); err != nil {
		t.Fatal(err)
	}
	// Once nothing is held, the scheduler exits after loopLinger and the
	// idle groups go with it.
	deadline := time.Now().Add(loopLinger + 10*time.Second)
	for {
		if all, _ := c.groupCount(); all == 0 {
			break
		}
		if time.Now().After(deadline) {
			all, idle := c.groupCount()
			t.Fatalf("%s after the last release: %d groups, %d idle; want none", loopLinger+10*time.Second, all, idle)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// A lease released after the scheduler's loop has gone to sleep on that
// lease's renewal timer (well past loopLinger) does not keep the loop, nor
// its idle batch groups, until that timer: the loop lingers from the
// release.
func TestLoopLingersFromTheLastRelease(t *testing.T) {
	c, err := New(&grantAll{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	l, err := c.Acquire(ctx, "k", AcquireOptions{TTL: time.Hour}) // renewal in about 20 minutes
	if err != nil {
		t.Fatal(err)
	}
	for { // until the loop sleeps on the renewal's timer
		c.mu.Lock()
		armed := c.armed
		c.mu.Unlock()
		if armed.After(time.Now().Add(time.Minute)) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := l.Release(ctx); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(loopLinger + time.Minute)
	for {
		if all, _ := c.groupCount(); all == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the loop and its batch group outlived the last release by %s", loopLinger+time.Minute)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
