package sqlite

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/leasehold-go/leasehold"
)

// fakeClock is a wall clock the test steps by hand.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Step(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

func newClock() *fakeClock { return &fakeClock{t: time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)} }

func req(key string, ttl time.Duration) leasehold.AcquireRequest {
	return leasehold.AcquireRequest{Key: key, Owner: leasehold.NewOwnerID(), Label: "test:" + key, TTL: ttl}
}

func mustAcquire(t *testing.T, s *Store, r leasehold.AcquireRequest) leasehold.Grant {
	t.Helper()
	g, err := s.Acquire(ctxT(t), r)
	if err != nil {
		t.Fatalf("acquire %q: %v", r.Key, err)
	}
	return g
}

func TestInfo(t *testing.T) {
	s := openT(t, tempDB(t), nil)
	info := s.Info()
	if info.Name != "sqlite" || info.MinTTL != MinTTL || info.MaxTTL != leasehold.MaxTTL || !info.SafeTokens {
		t.Fatalf("Info() = %+v", info)
	}
}

func TestAcquireHeldRenewRelease(t *testing.T) {
	clk := newClock()
	s := openT(t, tempDB(t), &Options{Now: clk.Now})
	a := mustAcquire(t, s, req("k", 10*time.Second))
	if a.Token != 1 {
		t.Fatalf("first token = %d, want 1", a.Token)
	}
	clk.Step(4 * time.Second)
	_, err := s.Acquire(ctxT(t), req("k", time.Second))
	var he *leasehold.HeldError
	if !errors.As(err, &he) || !errors.Is(err, leasehold.ErrHeld) {
		t.Fatalf("second acquire: %v, want *HeldError", err)
	}
	if he.Key != "k" || he.Label != "test:k" || he.Token != 1 || he.Remaining != 6*time.Second {
		t.Fatalf("HeldError = %+v", he)
	}
	h, err := s.Holder(ctxT(t), "k")
	if err != nil || h.Token != 1 || h.Label != "test:k" || h.Remaining != 6*time.Second {
		t.Fatalf("Holder = %+v, %v", h, err)
	}
	// Renew extends from now by the grant's TTL.
	if _, err := s.Renew(ctxT(t), a); err != nil {
		t.Fatalf("renew: %v", err)
	}
	if h, _ := s.Holder(ctxT(t), "k"); h.Remaining != 10*time.Second {
		t.Fatalf("after renew Remaining = %s, want 10s", h.Remaining)
	}
	// Wrong owner and wrong token are refused and change nothing.
	bad := a
	bad.Owner = leasehold.NewOwnerID()
	if _, err := s.Renew(ctxT(t), bad); !errors.Is(err, leasehold.ErrNotHeld) {
		t.Fatalf("renew by another owner: %v", err)
	}
	if err := s.Release(ctxT(t), bad); !errors.Is(err, leasehold.ErrNotHeld) {
		t.Fatalf("release by another owner: %v", err)
	}
	bad = a
	bad.Token = 2
	if err := s.Release(ctxT(t), bad); !errors.Is(err, leasehold.ErrNotHeld) {
		t.Fatalf("release with a forged token: %v", err)
	}
	bad.Token = 0
	if err := s.Release(ctxT(t), bad); !errors.Is(err, leasehold.ErrNotHeld) {
		t.Fatalf("release with token 0: %v", err)
	}
	if _, err := s.Holder(ctxT(t), "k"); err != nil {
		t.Fatalf("holder after refused calls: %v", err)
	}
	if err := s.Release(ctxT(t), a); err != nil {
		t.Fatalf("release: %v", err)
	}
	if _, err := s.Holder(ctxT(t), "k"); !errors.Is(err, leasehold.ErrNotHeld) {
		t.Fatalf("holder after release: %v", err)
	}
	if err := s.Release(ctxT(t), a); !errors.Is(err, leasehold.ErrNotHeld) {
		t.Fatalf("second release: %v", err)
	}
	if _, err := s.Renew(ctxT(t), a); !errors.Is(err, leasehold.ErrNotHeld) {
		t.Fatalf("renew after release: %v", err)
	}
	// The counter survives release.
	if b := mustAcquire(t, s, req("k", time.Second)); b.Token != 2 {
		t.Fatalf("token after release = %d, want 2", b.Token)
	}
}

func TestExpiryAndClockSteps(t *testing.T) {
	clk := newClock()
	s := openT(t, tempDB(t), &Options{Now: clk.Now})
	a := mustAcquire(t, s, req("k", time.Second))

	// Renew of an expired lease nobody took succeeds and keeps the token.
	clk.Step(2 * time.Second)
	if _, err := s.Holder(ctxT(t), "k"); !errors.Is(err, leasehold.ErrNotHeld) {
		t.Fatalf("holder after expiry: %v", err)
	}
	if g, err := s.Renew(ctxT(t), a); err != nil || g.Token != a.Token {
		t.Fatalf("renew of an expired, untaken lease: %+v, %v", g, err)
	}
	if h, err := s.Holder(ctxT(t), "k"); err != nil || h.Token != a.Token {
		t.Fatalf("holder after late renew: %+v, %v", h, err)
	}

	// Expired and taken: renew and release fail, the new token is higher.
	clk.Step(2 * time.Second)
	b := mustAcquire(t, s, req("k", time.Second))
	if b.Token <= a.Token {
		t.Fatalf("token after expiry %d <= %d", b.Token, a.Token)
	}
	if _, err := s.Renew(ctxT(t), a); !errors.Is(err, leasehold.ErrNotHeld) {
		t.Fatalf("renew after takeover: %v", err)
	}
	if err := s.Release(ctxT(t), a); !errors.Is(err, leasehold.ErrNotHeld) {
		t.Fatalf("release after takeover: %v", err)
	}

	// A wall-clock step forward ends leases early; a step back lengthens
	// them. Tokens keep increasing either way.
	clk.Step(-time.Hour)
	if _, err := s.Acquire(ctxT(t), req("k", time.Second)); !errors.Is(err, leasehold.ErrHeld) {
		t.Fatalf("acquire after a step back: %v", err)
	}
	clk.Step(2 * time.Hour)
	c := mustAcquire(t, s, req("k", time.Second))
	if c.Token <= b.Token {
		t.Fatalf("token after clock steps %d <= %d", c.Token, b.Token)
	}
}

func TestTokensSurviveReopen(t *testing.T) {
	path := tempDB(t)
	var last uint64
	for i := 0; i < 5; i++ {
		s, err := Open(ctxT(t), path, nil)
		if err != nil {
			t.Fatal(err)
		}
		g := mustAcquire(t, s, req("k", time.Minute))
		if g.Token <= last {
			t.Fatalf("reopen %d: token %d <= %d", i, g.Token, last)
		}
		last = g.Token
		if i%2 == 0 {
			if err := s.Release(ctxT(t), g); err != nil {
				t.Fatal(err)
			}
		}
		// Odd rounds leave the lease held: later handles see it held
		// until it expires.
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		if i%2 == 1 {
			s2 := openT(t, path, &Options{Now: func() time.Time { return time.Now().Add(2 * time.Minute) }})
			if _, err := s2.Holder(ctxT(t), "k"); !errors.Is(err, leasehold.ErrNotHeld) {
				t.Fatalf("holder two minutes on: %v", err)
			}
			s3 := openT(t, path, nil)
			if _, err := s3.Acquire(ctxT(t), req("k", time.Minute)); !errors.Is(err, leasehold.ErrHeld) {
				t.Fatalf("acquire of a lease held across reopen: %v", err)
			}
			g := mustAcquire(t, s2, req("k", time.Second))
			last = g.Token
			s2.Release(ctxT(t), g)
		}
	}
}

func TestList(t *testing.T) {
	clk := newClock()
	s := openT(t, tempDB(t), &Options{Now: clk.Now})
	for _, k := range []string{"a", "a/x", "a/y", "ab", "b", "a/z"} {
		mustAcquire(t, s, req(k, time.Minute))
	}
	gz := mustAcquire(t, s, req("a/short", time.Second))
	released := mustAcquire(t, s, req("a/released", time.Minute))
	if err := s.Release(ctxT(t), released); err != nil {
		t.Fatal(err)
	}
	_ = gz
	clk.Step(2 * time.Second)
	hs, err := s.List(ctxT(t), "a/")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, h := range hs {
		got = append(got, fmt.Sprintf("%s:%d:%s", h.Key, h.Token, h.Remaining))
	}
	want := []string{"a/x:1:58s", "a/y:1:58s", "a/z:1:58s"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("List(a/) = %v, want %v", got, want)
	}
	all, err := s.List(ctxT(t), "")
	if err != nil || len(all) != 6 {
		t.Fatalf("List() = %d holders, %v; want 6", len(all), err)
	}
}

func TestRenewMany(t *testing.T) {
	clk := newClock()
	s := openT(t, tempDB(t), &Options{Now: clk.Now})
	a := mustAcquire(t, s, req("a", time.Second))
	b := mustAcquire(t, s, req("b", time.Second))
	c := mustAcquire(t, s, req("c", time.Second))
	if err := s.Release(ctxT(t), c); err != nil {
		t.Fatal(err)
	}
	clk.Step(500 * time.Millisecond)
	a.TTL, b.TTL = 10*time.Second, 0
	res, err := s.RenewMany(ctxT(t), []leasehold.Grant{a, b, c})
	if err != nil {
		t.Fatal(err)
	}
	if res[0].Err != nil || res[0].Grant.Token != a.Token {
		t.Errorf("renew a: %+v", res[0])
	}
	if !errors.Is(res[1].Err, leasehold.ErrInvalidTTL) {
		t.Errorf("renew b with TTL 0: %v", res[1].Err)
	}
	if !errors.Is(res[2].Err, leasehold.ErrNotHeld) {
		t.Errorf("renew of released c: %v", res[2].Err)
	}
	if h, _ := s.Holder(ctxT(t), "a"); h.Remaining != 10*time.Second {
		t.Errorf("a remaining %s, want 10s", h.Remaining)
	}
}

func TestBadInput(t *testing.T) {
	s := openT(t, tempDB(t), nil)
	for _, k := range []string{"", "a\x00b", "tab\there", string(make([]byte, leasehold.MaxKeyLen+1)), "\xff"} {
		if _, err := s.Acquire(ctxT(t), req(k, time.Second)); !errors.Is(err, leasehold.ErrInvalidKey) {
			t.Errorf("acquire key %q: %v, want ErrInvalidKey", k, err)
		}
		if _, err := s.Holder(ctxT(t), k); !errors.Is(err, leasehold.ErrInvalidKey) {
			t.Errorf("holder key %q: %v, want ErrInvalidKey", k, err)
		}
	}
	for _, ttl := range []time.Duration{0, -time.Second, time.Millisecond, leasehold.MaxTTL + 1} {
		if _, err := s.Acquire(ctxT(t), req("k", ttl)); !errors.Is(err, leasehold.ErrInvalidTTL) {
			t.Errorf("acquire TTL %s: %v, want ErrInvalidTTL", ttl, err)
		}
	}
	g := mustAcquire(t, s, req("k", time.Second))
	g.TTL = 0
	if _, err := s.Renew(ctxT(t), g); !errors.Is(err, leasehold.ErrInvalidTTL) {
		t.Errorf("renew TTL 0: %v", err)
	}
	// No token was burnt by the refused calls.
	if g.Token != 1 {
		t.Errorf("token %d after refused acquires, want 1", g.Token)
	}
	// Keys that look like SQL or patterns are opaque.
	for _, k := range []string{"%", "_", "a'b", `"; DROP TABLE leasehold_leases; --`, "ключ/ü"} {
		g := mustAcquire(t, s, req(k, time.Second))
		if h, err := s.Holder(ctxT(t), k); err != nil || h.Token != g.Token {
			t.Errorf("holder %q: %+v %v", k, h, err)
		}
		if hs, err := s.List(ctxT(t), k); err != nil || len(hs) != 1 {
			t.Errorf("list %q: %v %v", k, hs, err)
		}
	}
}

func TestClosedAndCancelled(t *testing.T) {
	s := openT(t, tempDB(t), nil)
	g := mustAcquire(t, s, req("k", time.Second))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := s.Acquire(ctx, req("x", time.Second)); !errors.Is(err, context.Canceled) || errors.Is(err, leasehold.ErrStore) {
		t.Errorf("acquire on a cancelled context: %v", err)
	}
	if _, err := s.Holder(ctx, "k"); !errors.Is(err, context.Canceled) {
		t.Errorf("holder on a cancelled context: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Errorf("second close: %v", err)
	}
	if _, err := s.Acquire(ctxT(t), req("x", time.Second)); !errors.Is(err, leasehold.ErrClosed) || !errors.Is(err, leasehold.ErrStore) {
		t.Errorf("acquire after close: %v", err)
	}
	if err := s.Release(ctxT(t), g); !errors.Is(err, leasehold.ErrClosed) {
		t.Errorf("release after close: %v", err)
	}
	if _, err := s.List(ctxT(t), ""); !errors.Is(err, leasehold.ErrClosed) {
		t.Errorf("list after close: %v", err)
	}
}

// TestContendersInProcess: 100 goroutines over three handles on one file
// race for one hot key and for their own keys; exactly one wins each round,
// nobody gets a store error, tokens keep increasing.
func TestContendersInProcess(t *testing.T) {
	path := tempDB(t)
	handles := []*Store{openT(t, path, nil), openT(t, path, nil), openT(t, path, nil)}
	const n = 100
	var last uint64
	for round := 0; round < 5; round++ {
		var (
			wins, other atomic.Int64
			mu          sync.Mutex
			won         leasehold.Grant
			wg          sync.WaitGroup
			errs        = make(chan error, n)
			start       = make(chan struct{})
		)
		for i := 0; i < n; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				s := handles[i%len(handles)]
				<-start
				g, err := s.Acquire(ctxT(t), req("hot", time.Minute))
				switch {
				case err == nil:
					wins.Add(1)
					mu.Lock()
					won = g
					mu.Unlock()
				case !errors.Is(err, leasehold.ErrHeld):
					errs <- err
				}
				own := fmt.Sprintf("own/%d", i)
				g, err = s.Acquire(ctxT(t), req(own, time.Minute))
				if err != nil {
					errs <- err
					return
				}
				if err := s.Release(ctxT(t), g); err != nil {
					errs <- err
				}
				other.Add(1)
			}()
		}
		close(start)
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Errorf("round %d: %v", round, err)
		}
		if wins.Load() != 1 {
			t.Fatalf("round %d: %d winners", round, wins.Load())
		}
		if won.Token <= last {
			t.Fatalf("round %d: token %d <= %d", round, won.Token, last)
		}
		last = won.Token
		if err := handles[0].Release(ctxT(t), won); err != nil {
			t.Fatal(err)
		}
	}
}
