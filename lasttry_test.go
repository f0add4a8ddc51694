package leasehold_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/memory"
)

// scripted wraps a memory store; its n-th Acquire (from 1) does what
// acquire says: "block" (until ctx ends, returning a bare ctx error),
// "held" (a *HeldError at once), or anything else (the memory store's
// answer); the last step repeats. It counts the calls.
type scripted struct {
	*memory.Store
	script []string
	calls  atomic.Int32
}

func (s *scripted) Acquire(ctx context.Context, req leasehold.AcquireRequest) (leasehold.Grant, error) {
	n := int(s.calls.Add(1))
	step := ""
	if len(s.script) > 0 {
		step = s.script[min(n, len(s.script))-1] // the last step repeats
	}
	switch step {
	case "block":
		<-ctx.Done()
		return leasehold.Grant{}, ctx.Err()
	case "held":
		return leasehold.Grant{}, &leasehold.HeldError{Key: req.Key, Token: 1}
	}
	return s.Store.Acquire(ctx, req)
}

// queued is a scripted store that queues waiters like ZooKeeper's: its
// AcquireWait ends with a bare context error when the turn never comes.
type queued struct{ *scripted }

func (q queued) AcquireWait(ctx context.Context, _ leasehold.AcquireRequest) (leasehold.Grant, error) {
	<-ctx.Done()
	return leasehold.Grant{}, ctx.Err()
}

// TestLastTryOnlyWhenUnanswered: a wait that ran out makes one more
// attempt only when none of its attempts was answered (a Wait shorter than
// a round trip), not after a queued wait or an answered attempt (the old
// code made the extra attempt after every queued wait that timed out).
func TestLastTryOnlyWhenUnanswered(t *testing.T) {
	for _, tc := range []struct {
		name    string
		queue   bool
		script  []string
		calls   int32 // the store's plain Acquire calls
		granted bool
	}{
		{name: "unanswered tiny wait tries once more", script: []string{"block", ""}, calls: 2, granted: true},
		{name: "answered then cut short", script: []string{"held", "block"}, calls: -1},
		{name: "queued wait that timed out", queue: true, calls: 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mem := memory.New(nil)
			defer mem.Close()
			sc := &scripted{Store: mem, script: tc.script}
			var st leasehold.Store = sc
			if tc.queue {
				st = queued{sc}
			}
			c, err := leasehold.New(st, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			l, err := c.Acquire(context.Background(), "k", leasehold.AcquireOptions{TTL: time.Minute, Wait: 20 * time.Millisecond})
			if tc.granted {
				if err != nil {
					t.Fatalf("Acquire: %v, want a grant", err)
				}
				_ = l.Release(context.Background())
			} else if !errors.Is(err, leasehold.ErrHeld) {
				t.Fatalf("Acquire: %v, %v; want ErrHeld", l, err)
			}
			got := sc.calls.Load()
			if tc.calls >= 0 && got != tc.calls {
				t.Errorf("store Acquire calls = %d, want %d", got, tc.calls)
			}
			if tc.calls < 0 && got > 2 {
				t.Errorf("store Acquire calls = %d, want 2 (an answered attempt, then one cut short: no extra attempt after the wait) ", got)
			}
		})
	}
}
