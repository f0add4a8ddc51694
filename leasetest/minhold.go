package leasetest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/leasehold-go/leasehold"
)

// acquirer acquires a lease as leasehold.Client.Acquire does; the MinHold
// rule takes one so that its sensitivity test can hand it a client that
// ignores MinHold.
type acquirer func(ctx context.Context, key string, opts leasehold.AcquireOptions) (*leasehold.Lease, error)

// minHold checks that a key acquired through a Client with
// AcquireOptions.MinHold stays held for MinHold after the grant although
// its holder released it at once, on this store: the client keeps renewing
// the released lease and frees it when MinHold has passed. MinHold is half
// as long again as the TTL, so the key outlives its first TTL only if the
// store honours the renewals of a released lease. See
// docs/design.md#holding-at-least-minhold.
func (s *suite) minHold(t *testing.T) {
	st := s.open(t)
	c := s.client(t, st, nil)
	checkMinHold(t, c.Acquire, st, key(t, "k"), s.ttl)
}

// checkMinHold is the MinHold rule over acquire and st, on key k with
// leases of ttl.
func checkMinHold(t testing.TB, acquire acquirer, st leasehold.Store, k string, ttl time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	minHold := ttl + ttl/2
	before := time.Now() // the grant, and so the hold, starts after this
	l, err := acquire(ctx, k, leasehold.AcquireOptions{TTL: ttl, MinHold: minHold})
	if err != nil {
		t.Fatalf("acquire with MinHold %s: %v", minHold, err)
	}
	if err := l.Release(ctx); err != nil {
		t.Fatalf("early release of a lease with MinHold: %v", err)
	}
	select {
	case <-l.Done():
	default:
		t.Fatalf("the released lease's context is not done")
	}
	if !errors.Is(l.Err(), leasehold.ErrReleased) {
		t.Errorf("the released lease's context ended with %v, want ErrReleased", l.Err())
	}
	end := before.Add(minHold + 10*ttl + 10*time.Second)
	for probes := 0; ; probes++ {
		g, err := st.Acquire(ctx, req(k, ttl))
		switch {
		case err == nil:
			if held := time.Since(before); held < minHold {
				t.Fatalf("key %q granted to another owner %s after the grant (probe %d), before MinHold %s had passed", k, held, probes, minHold)
			}
			if g.Token <= l.Token() {
				t.Errorf("token %d after the MinHold, want more than %d", g.Token, l.Token())
			}
			_ = st.Release(ctx, g)
			return
		case errors.Is(err, leasehold.ErrHeld):
		case errors.Is(err, leasehold.ErrStore):
			t.Logf("probe %d: inconclusive, the store failed: %v", probes, err)
		default:
			t.Fatalf("probe %d: got %v, want ErrHeld", probes, err)
		}
		if time.Now().After(end) {
			t.Fatalf("key %q still held %s after a grant with MinHold %s and TTL %s", k, time.Since(before), minHold, ttl)
		}
		time.Sleep(ttl / 10)
	}
}
