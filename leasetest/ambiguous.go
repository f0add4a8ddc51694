package leasetest

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/leasehold-go/leasehold"
)

// ambiguousCleanup checks rule 2's corollary for an acquire whose answer
// never came back: its context ended mid-flight, so the store may have
// applied it unseen, and may clean it up (now, or when a delayed
// statement lands). Whatever it does, the clean-up must never reach a later
// grant of the key. The later attempt carries a fresh owner id, as every
// attempt of a Client does, so a clean-up keyed on the abandoned attempt's
// owner (and token, where known) is safe, and one keyed on less is caught.
//
// The abandoned attempts end after 0 to 110% of the time a normal acquire
// takes, so across the rounds some end before the store saw them, some
// while it worked and some just after it answered.
//
// See docs/design.md#owner-ids-and-clean-up.
func (s *suite) ambiguousCleanup(t *testing.T) {
	st := s.open(t)
	settle := max(s.ttl/2, 50*time.Millisecond) // for a clean-up still in flight
	rtt := acquireTime(t, st)
	ambiguous := 0
	for i := range 12 {
		k := key(t, fmt.Sprint(i))
		actx, cancel := context.WithTimeout(ctxT(t), rtt*time.Duration(i)/10)
		g, err := st.Acquire(actx, req(k, s.ttl))
		cancel()
		if err == nil {
			_ = st.Release(ctxT(t), g)
			continue
		}
		if errors.Is(err, leasehold.ErrInvalidKey) || errors.Is(err, leasehold.ErrInvalidTTL) {
			t.Fatalf("abandoned acquire: %v", err)
		}
		ambiguous++
		// The abandoned attempt, if applied and not cleaned up, ends with
		// its short TTL; a later attempt by a new owner id gets the key.
		later := acquireEventually(t, st, req(k, time.Minute), 10*s.ttl+10*time.Second)
		time.Sleep(settle)
		if _, err := st.Renew(ctxT(t), later); err != nil {
			t.Fatalf("round %d: the grant made after an abandoned acquire (token %d) was removed behind its holder: renew: %v", i, later.Token, err)
		}
		if h, err := st.Holder(ctxT(t), k); err != nil || h.Token != later.Token {
			t.Fatalf("round %d: after an abandoned acquire's clean-up, Holder = %+v, %v; want the later grant's token %d", i, h, err, later.Token)
		}
		if g := probeHeld(t, st, k, time.Minute, "another owner after the later grant"); g != nil {
			t.Fatalf("round %d: another owner got token %d while the later grant (token %d) is held", i, g.Token, later.Token)
		}
		if err := st.Release(ctxT(t), later); err != nil {
			t.Errorf("round %d: release of the later grant: %v", i, err)
		}
	}
	t.Logf("%d of 12 acquires were abandoned mid-flight", ambiguous)
}

// acquireTime is how long an uncontended acquire and its release take on
// st, the fastest of three.
func acquireTime(t *testing.T, st leasehold.Store) time.Duration {
	best := time.Duration(1<<63 - 1)
	for i := range 3 {
		r := req(key(t, fmt.Sprint("rtt", i)), time.Minute)
		start := time.Now()
		g, err := st.Acquire(ctxT(t), r)
		d := time.Since(start)
		if err != nil {
			t.Fatalf("acquire: %v", err)
		}
		_ = st.Release(ctxT(t), g)
		best = min(best, d)
	}
	return best
}
