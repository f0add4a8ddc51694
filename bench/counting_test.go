package bench

import (
	"context"
	"strings"
	"testing"

	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/memory"
)

// Stores with each combination of the optional capabilities.
type (
	plain struct{ leasehold.Store }
	withW struct {
		leasehold.Store
		leasehold.Waiter
	}
	withB struct {
		leasehold.Store
		leasehold.BatchRenewer
	}
	withNWB struct {
		*memory.Store
		leasehold.Waiter
		leasehold.BatchRenewer
	}
)

type waitStub struct{ s leasehold.Store }

func (w waitStub) AcquireWait(ctx context.Context, req leasehold.AcquireRequest) (leasehold.Grant, error) {
	return w.s.Acquire(ctx, req)
}

type batchStub struct{ s leasehold.Store }

func (b batchStub) RenewMany(ctx context.Context, gs []leasehold.Grant) ([]leasehold.RenewResult, error) {
	out := make([]leasehold.RenewResult, len(gs))
	for i, g := range gs {
		out[i].Grant, out[i].Err = b.s.Renew(ctx, g)
	}
	return out, nil
}

// capabilities names the optional capabilities s offers.
func capabilities(s leasehold.Store) string {
	var out []string
	add := func(ok bool, name string) {
		if ok {
			out = append(out, name)
		}
	}
	_, ok := s.(leasehold.Notifier)
	add(ok, "Notifier")
	_, ok = s.(leasehold.Watcher)
	add(ok, "Watcher")
	_, ok = s.(leasehold.Waiter)
	add(ok, "Waiter")
	_, ok = s.(leasehold.BatchRenewer)
	add(ok, "BatchRenewer")
	_, ok = s.(leasehold.LostExplainer)
	add(ok, "LostExplainer")
	_, ok = s.(leasehold.Lister)
	add(ok, "Lister")
	return strings.Join(out, ",")
}

// TestCountKeepsCapabilities checks that the counting wrapper offers
// exactly the optional capabilities of the store it wraps, so a client
// waits and renews over it as it would over the store.
func TestCountKeepsCapabilities(t *testing.T) {
	m := memory.New(nil) // a Notifier and a Lister
	for _, tc := range []struct {
		name    string
		s       leasehold.Store
		n, w, b bool
	}{
		{"none", plain{m}, false, false, false},
		{"notifier", m, true, false, false},
		{"waiter", withW{m, waitStub{m}}, false, true, false},
		{"batch", withB{m, batchStub{m}}, false, false, true},
		{"all", withNWB{m, waitStub{m}, batchStub{m}}, true, true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, cnt := count(tc.s)
			_, n := c.(leasehold.Notifier)
			_, w := c.(leasehold.Waiter)
			_, b := c.(leasehold.BatchRenewer)
			if n != tc.n || w != tc.w || b != tc.b {
				t.Errorf("wrapper: notifier %v waiter %v batch %v; want %v %v %v", n, w, b, tc.n, tc.w, tc.b)
			}
			if got, want := capabilities(c), capabilities(tc.s); got != want {
				t.Errorf("wrapper offers %s; the store offers %s", got, want)
			}
			ctx := context.Background()
			req := leasehold.AcquireRequest{Key: "k/" + tc.name, Owner: leasehold.NewOwnerID(), TTL: 1 << 30}
			g, err := c.Acquire(ctx, req)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := c.Acquire(ctx, leasehold.AcquireRequest{Key: req.Key, Owner: leasehold.NewOwnerID(), TTL: 1 << 30}); err == nil {
				t.Fatal("second acquire of a held key succeeded")
			}
			if w {
				if _, err := c.(leasehold.Waiter).AcquireWait(ctx, leasehold.AcquireRequest{Key: req.Key + "/w", Owner: req.Owner, TTL: 1 << 30}); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := c.Renew(ctx, g); err != nil {
				t.Fatal(err)
			}
			if b {
				if _, err := c.(leasehold.BatchRenewer).RenewMany(ctx, []leasehold.Grant{g, g}); err != nil {
					t.Fatal(err)
				}
			}
			wantAttempts, wantRenewals := int64(2), int64(1)
			if w {
				wantAttempts++
			}
			if b {
				wantRenewals += 2
			}
			if got := cnt.attempts.Load(); got != wantAttempts {
				t.Errorf("attempts %d, want %d", got, wantAttempts)
			}
			if cnt.refused.Load() != 1 || cnt.grants.Load() != wantAttempts-1 {
				t.Errorf("refused %d grants %d", cnt.refused.Load(), cnt.grants.Load())
			}
			if got := cnt.renewals.Load(); got != wantRenewals {
				t.Errorf("renewals %d, want %d", got, wantRenewals)
			}
			if err := c.Close(); err != nil {
				t.Fatal(err)
			}
			if err := Reachable(ctx, m, 0); err != nil {
				t.Errorf("closing the wrapper closed the caller's store: %v", err)
			}
		})
	}
}
