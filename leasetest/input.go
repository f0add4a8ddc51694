package leasetest

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/leasehold-go/leasehold"
)

// badInput checks rule 4's bounds and the input checks: bad keys, TTLs and
// waits are refused by the client and by the store called directly, with
// the sentinel errors the contract names, and leave nothing held.
// See docs/design.md#input-checks.
func (s *suite) badInput(t *testing.T) {
	st := s.open(t)
	c := s.client(t, st, nil)
	good := key(t, "k")
	keys := map[string]string{
		"empty":       "",
		"too long":    strings.Repeat("k", leasehold.MaxKeyLen+1),
		"NUL":         "a\x00b",
		"newline":     "a\nb",
		"escape":      "a\x1bb",
		"DEL":         "a\x7f",
		"invalid UTF": "a\xffb",
	}
	for name, k := range keys {
		if _, err := c.Acquire(ctxT(t), k, leasehold.AcquireOptions{TTL: time.Second}); !errors.Is(err, leasehold.ErrInvalidKey) {
			t.Errorf("key %s: got %v, want ErrInvalidKey", name, err)
		}
		if _, err := st.Acquire(ctxT(t), req(k, time.Minute)); !errors.Is(err, leasehold.ErrInvalidKey) {
			t.Errorf("store Acquire of a %s key: got %v, want ErrInvalidKey", name, err)
		}
		if _, err := st.Holder(ctxT(t), k); !errors.Is(err, leasehold.ErrInvalidKey) {
			t.Errorf("store Holder of a %s key: got %v, want ErrInvalidKey", name, err)
		}
	}
	ttls := []time.Duration{-time.Second, leasehold.MaxTTL + time.Second}
	if min := st.Info().MinTTL; min > time.Nanosecond {
		ttls = append(ttls, min-time.Nanosecond)
	}
	for _, ttl := range ttls {
		if _, err := c.Acquire(ctxT(t), good, leasehold.AcquireOptions{TTL: ttl}); !errors.Is(err, leasehold.ErrInvalidTTL) {
			t.Errorf("TTL %s: got %v, want ErrInvalidTTL", ttl, err)
		}
	}
	if _, err := st.Acquire(ctxT(t), req(good, 0)); !errors.Is(err, leasehold.ErrInvalidTTL) {
		t.Errorf("store Acquire with a zero TTL: got %v, want ErrInvalidTTL", err)
	}
	s.badGrants(t, st, good)
	if _, err := c.Acquire(ctxT(t), good, leasehold.AcquireOptions{TTL: max(time.Second, st.Info().MinTTL), Wait: -time.Second}); !errors.Is(err, leasehold.ErrInvalidWait) {
		t.Errorf("negative wait: got %v, want ErrInvalidWait", err)
	}
	// Nothing was left behind and no token was burnt into reuse: the key
	// is free and grants a token as usual.
	if _, err := st.Holder(ctxT(t), good); !errors.Is(err, leasehold.ErrNotHeld) {
		t.Errorf("refused acquires left %q held: %v", good, err)
	}
	g, err := st.Acquire(ctxT(t), req(good, time.Minute))
	if err != nil {
		t.Fatalf("acquire after refused input: %v", err)
	}
	_ = st.Release(ctxT(t), g)
}

// badGrants calls the store directly with grants no client would send: a
// zero TTL, a zero token, an empty owner. Each is refused with the error the
// contract names (see leasehold.CheckRenew), and none touches the lease.
func (s *suite) badGrants(t *testing.T, st leasehold.Store, k string) {
	t.Helper()
	g, err := st.Acquire(ctxT(t), req(k, time.Minute))
	if err != nil {
		t.Fatalf("acquire: %v", err)
	}
	zeroTTL, zeroTok, noOwner := g, g, g
	zeroTTL.TTL, zeroTok.Token, noOwner.Owner = 0, 0, ""
	zeroTok.TTL, noOwner.TTL = time.Minute, time.Minute
	if _, err := st.Renew(ctxT(t), zeroTTL); !errors.Is(err, leasehold.ErrInvalidTTL) {
		t.Errorf("store Renew with a zero TTL: got %v, want ErrInvalidTTL", err)
	}
	for name, bad := range map[string]leasehold.Grant{"zero token": zeroTok, "empty owner": noOwner} {
		if _, err := st.Renew(ctxT(t), bad); !errors.Is(err, leasehold.ErrNotHeld) {
			t.Errorf("store Renew with a %s: got %v, want ErrNotHeld", name, err)
		}
		if err := st.Release(ctxT(t), bad); !errors.Is(err, leasehold.ErrNotHeld) {
			t.Errorf("store Release with a %s: got %v, want ErrNotHeld", name, err)
		}
	}
	if h, err := st.Holder(ctxT(t), k); err != nil || h.Token != g.Token {
		t.Errorf("after refused grants, Holder = %+v, %v; want token %d", h, err, g.Token)
	}
	if err := st.Release(ctxT(t), g); err != nil {
		t.Errorf("release: %v", err)
	}
}

// cancellation checks that every store method returns the caller's
// context error on a cancelled context without acting, and that a waiting
// acquire ends with its caller's cancellation.
// See docs/design.md#keys-and-errors.
func (s *suite) cancellation(t *testing.T) {
	st := s.open(t)
	k := key(t, "k")
	done, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := st.Acquire(done, req(k, time.Minute)); !errors.Is(err, context.Canceled) {
		t.Errorf("store Acquire on a cancelled context: got %v, want context.Canceled", err)
	}
	if _, err := st.Holder(ctxT(t), k); !errors.Is(err, leasehold.ErrNotHeld) {
		t.Errorf("a cancelled acquire left the key held: %v", err)
	}
	g, err := st.Acquire(ctxT(t), req(k, time.Minute))
	if err != nil {
		t.Fatalf("acquire: %v", err)
	}
	if _, err := st.Renew(done, g); !errors.Is(err, context.Canceled) {
		t.Errorf("store Renew on a cancelled context: got %v, want context.Canceled", err)
	}
	if err := st.Release(done, g); !errors.Is(err, context.Canceled) {
		t.Errorf("store Release on a cancelled context: got %v, want context.Canceled", err)
	}
	if _, err := st.Holder(done, k); !errors.Is(err, context.Canceled) {
		t.Errorf("store Holder on a cancelled context: got %v, want context.Canceled", err)
	}
	// A waiting client acquire ends promptly with the caller's own
	// cancellation, told apart from ErrHeld.
	c := s.client(t, st, nil)
	ctx, cancelWait := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := c.Acquire(ctx, k, leasehold.AcquireOptions{TTL: time.Minute, Wait: leasehold.WaitForever})
		errc <- err
	}()
	time.Sleep(100 * time.Millisecond)
	cancelWait()
	select {
	case err := <-errc:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("cancelled waiter: got %v, want context.Canceled", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("cancelled waiter did not return within 10s")
	}
	if h, err := st.Holder(ctxT(t), k); err != nil || h.Token != g.Token {
		t.Errorf("after a cancelled waiter, Holder = %+v, %v; want token %d", h, err, g.Token)
	}
	if err := st.Release(ctxT(t), g); err != nil {
		t.Errorf("release: %v", err)
	}
}
