package leasetest

import (
	"context"
	"errors"
	"fmt"
	"sync"
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
	losses := newLossLog()
	c := s.client(t, st, &leasehold.Options{Observer: losses})
	checkMinHold(t, c.Acquire, losses, st, key(t, "k"), s.ttl)
}

// lossLog is an Observer that records the leases its client lost, so
// that the MinHold rule can tell a key freed early because the kept lease
// was lost (the machine too slow to renew it: inconclusive) from one freed
// early by a client or store that ignores MinHold.
type lossLog struct {
	mu   sync.Mutex
	lost map[string]bool // key and token
}

func newLossLog() *lossLog { return &lossLog{lost: map[string]bool{}} }

// Observe implements leasehold.Observer.
func (o *lossLog) Observe(e leasehold.Event) {
	if e.Kind == leasehold.EventLost {
		o.mu.Lock()
		o.lost[fmt.Sprint(e.Key, e.Token)] = true
		o.mu.Unlock()
	}
}

func (o *lossLog) has(l *leasehold.Lease) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.lost[fmt.Sprint(l.Key(), l.Token())]
}

// minHoldTries is how many times the MinHold rule tries again after a
// check made inconclusive by the loss of the kept lease.
const minHoldTries = 3

// checkMinHold is the MinHold rule over acquire (whose client reports its
// losses to losses) and st, on keys under k with leases of ttl.
func checkMinHold(t testing.TB, acquire acquirer, losses *lossLog, st leasehold.Store, k string, ttl time.Duration) {
	t.Helper()
	for try := 1; try <= minHoldTries; try++ {
		if minHoldOnce(t, acquire, losses, st, fmt.Sprintf("%s/%d", k, try), ttl) {
			return
		}
	}
	t.Fatalf("the kept lease was lost %d times in a row (the store or the machine is too slow to renew it)", minHoldTries)
}

// minHoldOnce makes one check of the MinHold rule on key k; it reports
// false when it was inconclusive: the key was granted again before MinHold
// had passed, but the client had lost the kept lease (a renewal came too
// late), which frees a key as MinHold says.
func minHoldOnce(t testing.TB, acquire acquirer, losses *lossLog, st leasehold.Store, k string, ttl time.Duration) bool {
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
			_ = st.Release(ctx, g)
			if held := time.Since(before); held < minHold {
				if losses.has(l) {
					t.Logf("inconclusive: the kept lease was lost, and the key granted again %s after the grant", held)
					return false
				}
				t.Fatalf("key %q granted to another owner %s after the grant (probe %d), before MinHold %s had passed", k, held, probes, minHold)
			}
			if g.Token <= l.Token() {
				t.Errorf("token %d after the MinHold, want more than %d", g.Token, l.Token())
			}
			return true
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
