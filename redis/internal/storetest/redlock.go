package storetest

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/internal/testserver"
	"github.com/leasehold-go/leasehold/leasetest"
	lhredis "github.com/leasehold-go/leasehold/redis"
)

// RedlockEnv is what the redlock tests need from an adapter module.
type RedlockEnv struct {
	// Masters are five redis-servers; the tests kill and restart them.
	Masters []*testserver.Redis
	// OpenURL is the adapter's OpenRedlockURL.
	OpenURL func(ctx context.Context, rawURL string) (leasehold.Store, error)
	// NewClient makes the adapter's client of one master, closed when t
	// ends.
	NewClient func(t testing.TB, addr string) lhredis.Client
}

// RunRedlock runs every test of the redlock store.
func RunRedlock(t *testing.T, env RedlockEnv) {
	if len(env.Masters) != 5 {
		t.Fatalf("RunRedlock needs 5 masters, got %d", len(env.Masters))
	}
	e := &env
	for _, tc := range []struct {
		name string
		fn   func(*testing.T)
	}{
		{"conformance_five_masters_with_restarts", e.conformance},
		{"conformance_one_of_five_killed", e.oneDown},
		{"three_of_five_killed_fails_cleanly", e.threeDown},
		{"renew_across_master_deaths", e.renewAcrossDeaths},
		{"waiter_wakes_on_release_not_backoff", e.wake},
		{"info_reports_unsafe_tokens", e.info},
		{"open_url_errors", e.openURLErrors},
		{"lost_reply_cleanup_spares_later_grant", e.lostReplyCleanup},
		{"answers_once_a_majority_settles", e.earlyAnswers},
		{"token_counter_ahead_of_the_proposal", e.counterAhead},
		{"tokens_exhausted_refused_nothing_held", e.tokensExhausted},
		{"planted_lease_refused_as_foreign", e.plantedLease},
	} {
		t.Run(tc.name, tc.fn)
	}
}

// URL returns the redlock URL of ss.
func URL(ss []*testserver.Redis) string {
	var hosts []string
	for _, s := range ss {
		hosts = append(hosts, s.Addr())
	}
	return "redlock://" + strings.Join(hosts, ",")
}

// Open opens the store on the masters; Run closes it.
func (e *RedlockEnv) Open(t testing.TB) leasehold.Store {
	t.Helper()
	s, err := e.OpenURL(Ctx(t), URL(e.Masters))
	if err != nil {
		t.Fatalf("OpenRedlockURL: %v", err)
	}
	return s
}

func (e *RedlockEnv) open(t testing.TB) leasehold.Store {
	s := e.Open(t)
	t.Cleanup(func() { s.Close() })
	return s
}

// Bad URLs and a minority of reachable masters fail; a majority opens.
func (e *RedlockEnv) openURLErrors(t *testing.T) {
	ctx := Ctx(t)
	dead := "127.0.0.1:1"
	m0, m1 := e.Masters[0].Addr(), e.Masters[1].Addr()
	for _, u := range []string{
		"redis://" + m0,
		"redlock://",
		"redlock://host-without-port",
		"redlock://" + m0 + "/x",
		"redlock://" + m0 + "?unknown=1",
		"redlock://" + m0 + "," + dead + "," + dead,
	} {
		s, err := e.OpenURL(ctx, u)
		if err == nil {
			s.Close()
			t.Errorf("OpenRedlockURL(%q) succeeded", u)
			continue
		}
		if !errors.Is(err, leasehold.ErrStore) {
			t.Errorf("OpenRedlockURL(%q): %v, want ErrStore", u, err)
		}
	}
	s, err := e.OpenURL(ctx, "redlock://"+m0+","+m1+","+dead+"?prefix=p:")
	if err != nil {
		t.Fatalf("OpenRedlockURL with 2 of 3 up: %v", err)
	}
	defer s.Close()
	g, err := s.Acquire(ctx, Req(Key(t, "k"), time.Minute))
	if err != nil {
		t.Fatalf("acquire with 2 of 3 up: %v", err)
	}
	if err := s.Release(ctx, g); err != nil {
		t.Fatalf("release with 2 of 3 up: %v", err)
	}
}

func (e *RedlockEnv) conformance(t *testing.T) {
	leasetest.Run(t, leasetest.Config{
		ShortTTL: shortTTL,
		Open:     e.Open,
		Restart:  func(t testing.TB) { Restart(t, e.Masters...) },
	})
}

// One of five masters killed: the whole suite still passes on the other
// four; the dead one is restarted (empty) afterwards.
func (e *RedlockEnv) oneDown(t *testing.T) {
	e.Masters[4].Kill()
	defer Restart(t, e.Masters[4])
	leasetest.Run(t, leasetest.Config{
		ShortTTL: shortTTL,
		Open:     e.Open,
		// go-redis redials the dead master from a goroutine that sleeps
		// 1 s between tries; it ends with the client's pool.
		IgnoreGoroutines: []string{"github.com/redis/go-redis/v9/internal/pool.(*ConnPool).tryDial"},
	})
}

// Three of five masters killed: every call fails with a store error naming
// the dead masters, nothing is reported held, and no master keeps a lease.
func (e *RedlockEnv) threeDown(t *testing.T) {
	st := e.open(t)
	for _, m := range e.Masters[:3] {
		m.Kill()
	}
	defer Restart(t, e.Masters[:3]...)

	k := Key(t, "k")
	_, err := st.Acquire(Ctx(t), Req(k, 30*time.Second))
	var se *leasehold.StoreError
	if !errors.As(err, &se) || errors.Is(err, leasehold.ErrHeld) {
		t.Fatalf("acquire with 3 of 5 masters down: got %v, want a *leasehold.StoreError and not ErrHeld", err)
	}
	for _, m := range e.Masters[:3] {
		if !strings.Contains(err.Error(), m.Addr()) {
			t.Errorf("error does not name dead master %s: %v", m.Addr(), err)
		}
	}
	if !strings.Contains(err.Error(), "2 of 5 masters granted, need 3") {
		t.Errorf("error does not say how many granted: %v", err)
	}
	// The two live masters granted, then were released.
	for _, m := range e.Masters[3:] {
		if v, err := m.Command(Ctx(t), "EXISTS", "leasehold:{"+k+"}:lock"); err != nil || v != ":0" {
			t.Errorf("master %s still holds the lease after the failed acquire: EXISTS = %s, %v", m.Addr(), v, err)
		}
	}
	if _, err := st.Holder(Ctx(t), k); !errors.As(err, &se) {
		t.Errorf("Holder with 3 of 5 down: got %v, want a *leasehold.StoreError", err)
	}
	c, err := leasehold.New(st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	l, err := c.Acquire(Ctx(t), k, leasehold.AcquireOptions{TTL: time.Second, Wait: time.Second})
	if l != nil || !errors.Is(err, leasehold.ErrStore) {
		t.Fatalf("client acquire with 3 of 5 down: lease %v, err %v; want no lease and ErrStore", l, err)
	}
}

// A lease held while masters die: with one down it stays renewable; with
// three down renewal and release fail as store errors (ambiguous, not a
// loss) and the holder's deadline settles it.
func (e *RedlockEnv) renewAcrossDeaths(t *testing.T) {
	st := e.open(t)
	g, err := st.Acquire(Ctx(t), Req(Key(t, "k"), 30*time.Second))
	if err != nil {
		t.Fatalf("acquire: %v", err)
	}
	e.Masters[0].Kill()
	defer Restart(t, e.Masters[0])
	if _, err := st.Renew(Ctx(t), g); err != nil {
		t.Fatalf("renew with 1 of 5 down: %v", err)
	}
	e.Masters[1].Kill()
	e.Masters[2].Kill()
	defer Restart(t, e.Masters[1], e.Masters[2])
	if _, err := st.Renew(Ctx(t), g); !errors.Is(err, leasehold.ErrStore) || errors.Is(err, leasehold.ErrNotHeld) {
		t.Fatalf("renew with 3 of 5 down: got %v, want ErrStore (ambiguous), not ErrNotHeld", err)
	}
	if err := st.Release(Ctx(t), g); !errors.Is(err, leasehold.ErrStore) {
		t.Fatalf("release with 3 of 5 down: got %v, want ErrStore", err)
	}
}

func (e *RedlockEnv) wake(t *testing.T) {
	st := e.open(t).(NotifyingStore)
	Wake(t, st, st)
}

func (e *RedlockEnv) info(t *testing.T) {
	info := e.open(t).Info()
	if info.Name != "redlock" || info.SafeTokens || !strings.Contains(info.TokenCaveat, "Kleppmann") {
		t.Fatalf("Info = %+v: want SafeTokens false and a caveat quoting Kleppmann", info)
	}
}
