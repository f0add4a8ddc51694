package leasetest

import (
	"testing"
	"time"
)

// tokenRelease checks rule 5 across release: twenty grants of one key get
// strictly increasing tokens.
// See docs/design.md#the-token-rules.
func (s *suite) tokenRelease(t *testing.T) {
	st := s.open(t)
	k := key(t, "k")
	var last uint64
	for i := 0; i < 20; i++ {
		g, err := st.Acquire(ctxT(t), req(k, 30*time.Second))
		if err != nil {
			t.Fatalf("acquire %d: %v", i, err)
		}
		if g.Token <= last {
			t.Fatalf("acquire %d: token %d not greater than the previous %d", i, g.Token, last)
		}
		last = g.Token
		if err := st.Release(ctxT(t), g); err != nil {
			t.Fatalf("release %d: %v", i, err)
		}
	}
}

// tokenExpiry checks rule 5 across expiry: the grant after an unrenewed
// lease ends has a larger token.
// See docs/design.md#the-token-rules.
func (s *suite) tokenExpiry(t *testing.T) {
	st := s.open(t)
	k := key(t, "k")
	g1, g2 := s.takeover(t, st, k, s.ttl)
	if g2.Token <= g1.Token {
		t.Fatalf("token after expiry %d not greater than %d", g2.Token, g1.Token)
	}
	_ = st.Release(ctxT(t), g2)
}

// tokenReopen checks rule 5 across closing the store and opening a new
// handle on the same data.
// See docs/design.md#the-token-rules.
func (s *suite) tokenReopen(t *testing.T) {
	st := s.cfg.Open(t)
	k := key(t, "k")
	g1, err := st.Acquire(ctxT(t), req(k, 30*time.Second))
	if err != nil {
		t.Fatalf("acquire: %v", err)
	}
	if err := st.Release(ctxT(t), g1); err != nil {
		t.Fatalf("release: %v", err)
	}
	if err := st.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}
	st2 := s.open(t)
	g2, err := st2.Acquire(ctxT(t), req(k, 30*time.Second))
	if err != nil {
		t.Fatalf("acquire after reopen: %v", err)
	}
	if g2.Token <= g1.Token {
		t.Fatalf("token after reopen %d not greater than %d", g2.Token, g1.Token)
	}
	_ = st2.Release(ctxT(t), g2)
}

// tokenRestart checks rule 5 across a restart of the backing server
// (Config.Restart), and that no lease is silently kept through it.
// See docs/design.md#the-token-rules.
func (s *suite) tokenRestart(t *testing.T) {
	if s.cfg.Restart == nil {
		t.Log("Config.Restart not set: restart not checked for this store")
		return
	}
	st := s.open(t)
	released := key(t, "released")
	held := key(t, "held")
	g1, err := st.Acquire(ctxT(t), req(released, 30*time.Second))
	if err != nil {
		t.Fatalf("acquire: %v", err)
	}
	if err := st.Release(ctxT(t), g1); err != nil {
		t.Fatalf("release: %v", err)
	}
	h1, err := st.Acquire(ctxT(t), req(held, s.ttl))
	if err != nil {
		t.Fatalf("acquire: %v", err)
	}
	s.cfg.Restart(t)
	st2 := s.open(t)
	limit := 10*s.ttl + 30*time.Second
	g2 := acquireEventually(t, st2, req(released, 30*time.Second), limit)
	if g2.Token <= g1.Token {
		t.Fatalf("token of a released key after restart %d not greater than %d", g2.Token, g1.Token)
	}
	h2 := acquireEventually(t, st2, req(held, 30*time.Second), limit)
	if h2.Token <= h1.Token {
		t.Fatalf("token of a held key after restart %d not greater than %d", h2.Token, h1.Token)
	}
	_ = st2.Release(ctxT(t), g2)
	_ = st2.Release(ctxT(t), h2)
}
