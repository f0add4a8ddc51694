package goredis_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/leasetest"
	"github.com/leasehold-go/leasehold/redis/goredis"
	"github.com/leasehold-go/leasehold/redis/internal/redistest"
)

func redlockURL(ss []*redistest.Server) string {
	var hosts []string
	for _, s := range ss {
		hosts = append(hosts, s.Addr())
	}
	return "redlock://" + strings.Join(hosts, ",")
}

func openRedlock(t testing.TB, ss []*redistest.Server) leasehold.Store {
	t.Helper()
	s, err := goredis.OpenRedlockURL(ctxT(t), redlockURL(ss))
	if err != nil {
		t.Fatalf("OpenRedlockURL: %v", err)
	}
	return s
}

// Five independent masters, restarts included.
func TestRedlockConformance(t *testing.T) {
	leasetest.Run(t, leasetest.Config{
		Open:    func(t testing.TB) leasehold.Store { return openRedlock(t, masters) },
		Restart: func(t testing.TB) { restartAll(t, masters...) },
	})
}

// One of five masters killed: the store keeps its guarantees on the other
// four (the whole suite passes), and a restart of the dead one rejoins it.
func TestRedlockOneOfFiveDown(t *testing.T) {
	masters[4].Kill()
	defer restartAll(t, masters[4])
	leasetest.Run(t, leasetest.Config{
		Open: func(t testing.TB) leasehold.Store { return openRedlock(t, masters) },
	})
}

// Three of five masters killed: every call fails with a StoreError that
// names the dead masters, and no master keeps a lease.
func TestRedlockThreeOfFiveDown(t *testing.T) {
	st := openRedlock(t, masters)
	defer st.Close()
	for _, m := range masters[:3] {
		m.Kill()
	}
	defer restartAll(t, masters[:3]...)

	k := "three-down"
	r := leasehold.AcquireRequest{Key: k, Owner: leasehold.NewOwnerID(), Label: "t", TTL: 30 * time.Second}
	_, err := st.Acquire(ctxT(t), r)
	var se *leasehold.StoreError
	if !errors.As(err, &se) {
		t.Fatalf("acquire with 3 of 5 masters down: got %v, want a *leasehold.StoreError", err)
	}
	if errors.Is(err, leasehold.ErrHeld) {
		t.Fatalf("acquire with 3 of 5 masters down reported the key held: %v", err)
	}
	for _, m := range masters[:3] {
		if !strings.Contains(err.Error(), m.Addr()) {
			t.Errorf("error does not name dead master %s: %v", m.Addr(), err)
		}
	}
	if !strings.Contains(err.Error(), "2 of 5 masters granted, need 3") {
		t.Errorf("error does not say how many granted: %v", err)
	}
	// The two live masters granted, then were released: nothing is held.
	for _, m := range masters[3:] {
		if v, err := m.Command("EXISTS", "leasehold:{"+k+"}:lock"); err != nil || v != ":0" {
			t.Errorf("master %s still holds the lease: EXISTS = %s, %v", m.Addr(), v, err)
		}
	}
	if _, err := st.Holder(ctxT(t), k); !errors.As(err, &se) {
		t.Errorf("Holder with 3 of 5 down: got %v, want a *leasehold.StoreError", err)
	}

	// Through a client waiting for the key: a clean error, no lease.
	c, err := leasehold.New(st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	l, err := c.Acquire(ctxT(t), k, leasehold.AcquireOptions{TTL: time.Second, Wait: time.Second})
	if l != nil || !errors.Is(err, leasehold.ErrStore) {
		t.Fatalf("client acquire with 3 of 5 down: lease %v, err %v; want no lease and ErrStore", l, err)
	}
}

// A lease held while masters die: with one down it stays renewable; with
// three down the renewal fails as a store error (not a loss) until the
// holder's deadline ends it.
func TestRedlockRenewAcrossDeaths(t *testing.T) {
	st := openRedlock(t, masters)
	defer st.Close()
	r := leasehold.AcquireRequest{Key: "renew-deaths", Owner: leasehold.NewOwnerID(), Label: "t", TTL: 30 * time.Second}
	g, err := st.Acquire(ctxT(t), r)
	if err != nil {
		t.Fatalf("acquire: %v", err)
	}
	masters[0].Kill()
	defer restartAll(t, masters[0])
	if _, err := st.Renew(ctxT(t), g); err != nil {
		t.Fatalf("renew with 1 of 5 down: %v", err)
	}
	masters[1].Kill()
	masters[2].Kill()
	defer restartAll(t, masters[1], masters[2])
	_, err = st.Renew(ctxT(t), g)
	if !errors.Is(err, leasehold.ErrStore) || errors.Is(err, leasehold.ErrNotHeld) {
		t.Fatalf("renew with 3 of 5 down: got %v, want ErrStore (ambiguous), not ErrNotHeld", err)
	}
	if err := st.Release(ctxT(t), g); !errors.Is(err, leasehold.ErrStore) {
		t.Fatalf("release with 3 of 5 down: got %v, want ErrStore", err)
	}
}

// Tokens of redlock are reported unsafe, with the reason.
func TestRedlockInfo(t *testing.T) {
	st := openRedlock(t, masters)
	defer st.Close()
	info := st.Info()
	if info.SafeTokens || !strings.Contains(info.TokenCaveat, "Kleppmann") {
		t.Fatalf("Info = %+v: want SafeTokens false and a caveat quoting Kleppmann", info)
	}
}

// OpenRedlockURL: bad URLs and a minority of reachable masters fail.
func TestOpenRedlockURLErrors(t *testing.T) {
	dead := "127.0.0.1:1"
	for _, u := range []string{
		"redis://" + masters[0].Addr(),
		"redlock://",
		"redlock://host-without-port",
		"redlock://" + masters[0].Addr() + "/x",
		"redlock://" + masters[0].Addr() + "?unknown=1",
		"redlock://" + masters[0].Addr() + "," + dead + "," + dead,
	} {
		s, err := goredis.OpenRedlockURL(ctxT(t), u)
		if err == nil {
			s.Close()
			t.Errorf("OpenRedlockURL(%q) succeeded", u)
			continue
		}
		if !errors.Is(err, leasehold.ErrStore) {
			t.Errorf("OpenRedlockURL(%q): %v, want ErrStore", u, err)
		}
	}
	// A majority is enough to open.
	s, err := goredis.OpenRedlockURL(ctxT(t), "redlock://"+masters[0].Addr()+","+masters[1].Addr()+","+dead)
	if err != nil {
		t.Fatalf("OpenRedlockURL with 2 of 3 up: %v", err)
	}
	s.Close()
}

// Clients the caller owns are not closed by the store.
func TestRedlockUserClients(t *testing.T) {
	var cs []*redis.Client
	for _, m := range masters {
		cs = append(cs, redis.NewClient(&redis.Options{Addr: m.Addr()}))
	}
	defer func() {
		for _, c := range cs {
			c.Close()
		}
	}()
	st, err := goredis.NewRedlock(cs, nil)
	if err != nil {
		t.Fatal(err)
	}
	r := leasehold.AcquireRequest{Key: "user-clients", Owner: leasehold.NewOwnerID(), Label: "t", TTL: 30 * time.Second}
	g, err := st.Acquire(ctxT(t), r)
	if err != nil {
		t.Fatalf("acquire: %v", err)
	}
	if err := st.Release(ctxT(t), g); err != nil {
		t.Fatalf("release: %v", err)
	}
	st.Close()
	for _, c := range cs {
		if err := c.Ping(ctxT(t)).Err(); err != nil {
			t.Fatalf("caller's client closed by the store: %v", err)
		}
	}
}

// A redlock waiter wakes on the release published by the masters.
func TestRedlockWakeOnRelease(t *testing.T) {
	st := openRedlock(t, masters)
	defer st.Close()
	testWake(t, st.(notifyingStore), st.(notifyingStore))
}
