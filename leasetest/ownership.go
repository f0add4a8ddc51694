package leasetest

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/leasehold-go/leasehold"
)

// exclusive checks rule 1: of many concurrent acquires of a free key,
// exactly one wins, round after round, each with a larger token.
// See docs/design.md#the-contract.
func (s *suite) exclusive(t *testing.T) {
	st := s.open(t)
	k := key(t, "k")
	var last uint64
	for round := 0; round < 5; round++ {
		var (
			mu     sync.Mutex
			wins   []leasehold.Grant
			others []error
			wg     sync.WaitGroup
			start  = make(chan struct{})
		)
		for i := 0; i < s.cfg.Contenders; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				g, err := st.Acquire(ctxT(t), req(k, 30*time.Second))
				mu.Lock()
				defer mu.Unlock()
				if err == nil {
					wins = append(wins, g)
				} else if !errors.Is(err, leasehold.ErrHeld) {
					others = append(others, err)
				}
			}()
		}
		close(start)
		wg.Wait()
		if len(others) > 0 {
			t.Errorf("round %d: %d contenders got errors other than ErrHeld, first: %v", round, len(others), others[0])
		}
		if len(wins) != 1 {
			t.Fatalf("round %d: %d of %d contenders acquired %q, want exactly 1", round, len(wins), s.cfg.Contenders, k)
		}
		if wins[0].Token <= last {
			t.Fatalf("round %d: token %d not greater than the previous round's %d", round, wins[0].Token, last)
		}
		last = wins[0].Token
		if err := st.Release(ctxT(t), wins[0]); err != nil {
			t.Fatalf("round %d: release by the winner: %v", round, err)
		}
	}
}

// heldError checks rule 1's refusal: an acquire of a held key is a
// *HeldError naming the key (and the holder's token and time left, where
// the store knows them), and Holder reports the holder without its owner id.
// See docs/design.md#the-contract.
func (s *suite) heldError(t *testing.T) {
	st := s.open(t)
	k := key(t, "k")
	a := req(k, 30*time.Second)
	a.Label = "holder-a"
	ga, err := st.Acquire(ctxT(t), a)
	if err != nil {
		t.Fatalf("acquire: %v", err)
	}
	defer st.Release(ctxT(t), ga)
	_, err = st.Acquire(ctxT(t), req(k, 30*time.Second))
	var he *leasehold.HeldError
	if !errors.As(err, &he) {
		t.Fatalf("second acquire: got %v, want a *HeldError", err)
	}
	if he.Key != k {
		t.Errorf("HeldError.Key = %q, want %q", he.Key, k)
	}
	if he.Token != 0 && he.Token != ga.Token {
		t.Errorf("HeldError.Token = %d, want the holder's %d", he.Token, ga.Token)
	}
	if he.Remaining > 30*time.Second {
		t.Errorf("HeldError.Remaining = %s, more than the TTL", he.Remaining)
	}
	h, err := st.Holder(ctxT(t), k)
	if err != nil {
		t.Fatalf("Holder: %v", err)
	}
	if h.Token != ga.Token || h.Label != "holder-a" {
		t.Errorf("Holder = %+v, want token %d label holder-a", h, ga.Token)
	}
}

// expiryLetsIn checks rule 1's expiry: a lease left unrenewed ends by the
// store's clock and another owner gets the key, with a larger token.
// See docs/design.md#the-contract.
func (s *suite) expiryLetsIn(t *testing.T) {
	st := s.open(t)
	k := key(t, "k")
	ga, gb := s.takeover(t, st, k, 30*time.Second)
	defer st.Release(ctxT(t), gb)
	if gb.Token <= ga.Token {
		t.Fatalf("token after expiry %d not greater than %d", gb.Token, ga.Token)
	}
}

// renewExtends checks rule 2: renewals by the owner keep the key past its
// first TTL.
// See docs/design.md#the-contract.
func (s *suite) renewExtends(t *testing.T) {
	s.attempts(t, s.renewExtendsOnce)
}

// renewExtendsOnce renews a short lease every TTL/4 for more than 2 TTLs;
// the key must stay the owner's. A renewal refused, or a probe granted,
// more than a TTL after the previous renewal was sent is inconclusive: the
// lease may really have run out while the machine stalled.
func (s *suite) renewExtendsOnce(t *testing.T) string {
	st := s.open(t)
	k := key(t, "k")
	sent := time.Now()
	// lost judges the key lost to its owner: a violation within a TTL of
	// the last renewal's send time, inconclusive after it.
	lost := func(what string) string {
		gap := time.Since(sent).Round(time.Millisecond)
		if gap < s.ttl {
			t.Fatalf("%s %s after the owner's last renewal was sent (TTL %s)", what, gap, s.ttl)
		}
		return fmt.Sprintf("%s %s after the last renewal was sent, past the %s TTL", what, gap, s.ttl)
	}
	g, err := st.Acquire(ctxT(t), req(k, s.ttl))
	if err != nil {
		t.Fatalf("acquire: %v", err)
	}
	end := time.Now().Add(2*s.ttl + 200*time.Millisecond)
	for time.Now().Before(end) {
		time.Sleep(s.ttl / 4)
		next := time.Now()
		g2, err := st.Renew(ctxT(t), g)
		if err != nil {
			return lost(fmt.Sprintf("renew by the owner refused (%v)", err))
		}
		sent = next
		if g2.Token != g.Token {
			t.Fatalf("renew changed the token from %d to %d", g.Token, g2.Token)
		}
		if other := probeHeld(t, st, k, s.ttl, "acquire by another while renewed"); other != nil {
			_ = st.Release(ctxT(t), *other)
			return lost("another owner acquired the key")
		}
	}
	if err := st.Release(ctxT(t), g); err != nil {
		t.Fatalf("release: %v", err)
	}
	return ""
}

// wrongOwner checks rules 2 and 3: a renew or release by another owner id,
// or with a forged token, is ErrNotHeld and leaves the owner's lease as it
// was.
// See docs/design.md#the-contract.
func (s *suite) wrongOwner(t *testing.T) {
	st := s.open(t)
	k := key(t, "k")
	g, err := st.Acquire(ctxT(t), req(k, 30*time.Second))
	if err != nil {
		t.Fatalf("acquire: %v", err)
	}
	forged := g
	forged.Owner = leasehold.NewOwnerID()
	if _, err := st.Renew(ctxT(t), forged); !errors.Is(err, leasehold.ErrNotHeld) {
		t.Errorf("renew by a wrong owner: got %v, want ErrNotHeld", err)
	}
	if err := st.Release(ctxT(t), forged); !errors.Is(err, leasehold.ErrNotHeld) {
		t.Errorf("release by a wrong owner: got %v, want ErrNotHeld", err)
	}
	forged = g
	forged.Token = g.Token + 1
	if err := st.Release(ctxT(t), forged); !errors.Is(err, leasehold.ErrNotHeld) {
		t.Errorf("release with a forged token: got %v, want ErrNotHeld", err)
	}
	h, err := st.Holder(ctxT(t), k)
	if err != nil || h.Token != g.Token {
		t.Fatalf("after refused calls, Holder = %+v, %v; want the owner's token %d", h, err, g.Token)
	}
	if _, err := st.Renew(ctxT(t), g); err != nil {
		t.Errorf("renew by the real owner after refused calls: %v", err)
	}
	if err := st.Release(ctxT(t), g); err != nil {
		t.Errorf("release by the real owner: %v", err)
	}
}

// staleToken checks rules 2 and 3 for one owner id on two grants: the
// first grant's token no longer renews or releases the key once the second
// is granted; only the token tells them apart.
// See docs/design.md#the-contract.
func (s *suite) staleToken(t *testing.T) {
	st := s.open(t)
	k := key(t, "k")
	r := req(k, 30*time.Second)
	g1, err := st.Acquire(ctxT(t), r)
	if err != nil {
		t.Fatalf("acquire: %v", err)
	}
	if err := st.Release(ctxT(t), g1); err != nil {
		t.Fatalf("release: %v", err)
	}
	// The same owner id again: only the token tells the grants apart.
	g2, err := st.Acquire(ctxT(t), r)
	if err != nil {
		t.Fatalf("second acquire: %v", err)
	}
	if g2.Token <= g1.Token {
		t.Fatalf("second token %d not greater than %d", g2.Token, g1.Token)
	}
	if _, err := st.Renew(ctxT(t), g1); !errors.Is(err, leasehold.ErrNotHeld) {
		t.Errorf("renew with the stale token: got %v, want ErrNotHeld", err)
	}
	if err := st.Release(ctxT(t), g1); !errors.Is(err, leasehold.ErrNotHeld) {
		t.Errorf("release with the stale token: got %v, want ErrNotHeld", err)
	}
	if h, err := st.Holder(ctxT(t), k); err != nil || h.Token != g2.Token {
		t.Fatalf("after stale calls, Holder = %+v, %v; want token %d", h, err, g2.Token)
	}
	if err := st.Release(ctxT(t), g2); err != nil {
		t.Errorf("release with the current token: %v", err)
	}
}

// renewAfterTakeover checks rule 2: once an expired lease has been taken,
// its former owner can neither renew nor release it.
// See docs/design.md#the-contract.
func (s *suite) renewAfterTakeover(t *testing.T) {
	st := s.open(t)
	k := key(t, "k")
	ga, gb := s.takeover(t, st, k, 30*time.Second)
	if _, err := st.Renew(ctxT(t), ga); !errors.Is(err, leasehold.ErrNotHeld) {
		t.Errorf("renew by the expired owner after takeover: got %v, want ErrNotHeld", err)
	}
	if err := st.Release(ctxT(t), ga); !errors.Is(err, leasehold.ErrNotHeld) {
		t.Errorf("release by the expired owner after takeover: got %v, want ErrNotHeld", err)
	}
	if h, err := st.Holder(ctxT(t), k); err != nil || h.Token != gb.Token {
		t.Fatalf("Holder = %+v, %v; want the new owner's token %d", h, err, gb.Token)
	}
	_ = st.Release(ctxT(t), gb)
}

// releaseFrees checks rule 3: a release frees the key at once, and a
// second release of the same grant is ErrNotHeld.
// See docs/design.md#the-contract.
func (s *suite) releaseFrees(t *testing.T) {
	st := s.open(t)
	k := key(t, "k")
	g, err := st.Acquire(ctxT(t), req(k, 30*time.Second))
	if err != nil {
		t.Fatalf("acquire: %v", err)
	}
	if err := st.Release(ctxT(t), g); err != nil {
		t.Fatalf("release: %v", err)
	}
	if _, err := st.Holder(ctxT(t), k); !errors.Is(err, leasehold.ErrNotHeld) {
		t.Errorf("Holder after release: got %v, want ErrNotHeld", err)
	}
	g2, err := st.Acquire(ctxT(t), req(k, 30*time.Second))
	if err != nil {
		t.Fatalf("acquire right after release: %v", err)
	}
	_ = st.Release(ctxT(t), g2)
	if err := st.Release(ctxT(t), g2); !errors.Is(err, leasehold.ErrNotHeld) {
		t.Errorf("second release of the same grant: got %v, want ErrNotHeld", err)
	}
}

// opaqueKeys checks rule 4: keys that share prefixes or hold characters a
// store treats specially are independent, and releasing one frees no other.
// See docs/design.md#keys-and-errors.
func (s *suite) opaqueKeys(t *testing.T) {
	st := s.open(t)
	base := key(t, "")
	keys := []string{base + "a", base + "a/x", base + "a/", base + "a*", base + "a:", base + "a%2F", base + "ключ/鍵", base + "a b", base + strings.Repeat("z", leasehold.MaxKeyLen-len(base)-1)}
	var gs []leasehold.Grant
	for _, k := range keys {
		g, err := st.Acquire(ctxT(t), req(k, 30*time.Second))
		if err != nil {
			t.Fatalf("acquire %q while the others are held: %v (keys must be independent)", k, err)
		}
		gs = append(gs, g)
	}
	for i, k := range keys {
		h, err := st.Holder(ctxT(t), k)
		if err != nil || h.Token != gs[i].Token {
			t.Errorf("Holder(%q) = %+v, %v; want token %d", k, h, err, gs[i].Token)
		}
	}
	if err := st.Release(ctxT(t), gs[0]); err != nil {
		t.Fatalf("release %q: %v", keys[0], err)
	}
	for i, k := range keys[1:] {
		if _, err := st.Holder(ctxT(t), k); err != nil {
			t.Errorf("releasing %q freed %q too: %v", keys[0], k, err)
		}
		_ = st.Release(ctxT(t), gs[i+1])
	}
}
