package storetest

import (
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/internal/testserver"
	lhredis "github.com/leasehold-go/leasehold/redis"
)

// A server that dies under a store: each call fails with a store error
// naming the server and the cause; a client's acquire fails the same way
// and holds nothing. OpenURL of a dead address fails naming it.
func (e *Env) deadServer(t *testing.T) {
	dead := "127.0.0.1:1"
	if s, err := e.OpenURL(Ctx(t), "redis://"+dead); err == nil {
		s.Close()
		t.Fatal("OpenURL of a dead server succeeded")
	} else if !errors.Is(err, leasehold.ErrStore) || !strings.Contains(err.Error(), dead) {
		t.Fatalf("OpenURL of a dead server: %v, want a store error naming %s", err, dead)
	}

	srv, err := testserver.StartRedis(Ctx(t), testserver.RedisOptions{Dir: e.Dir})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Stop()
	st, err := lhredis.New(e.NewClient(t, srv.Addr()), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	k := Key(t, "k")
	g, err := st.Acquire(Ctx(t), Req(k, time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	srv.Kill()
	check := func(op string, err error) {
		t.Helper()
		if !errors.Is(err, leasehold.ErrStore) || !strings.Contains(err.Error(), srv.Addr()) {
			t.Errorf("%s on a dead server: %v, want a store error naming %s", op, err, srv.Addr())
		}
	}
	_, err = st.Acquire(Ctx(t), Req(k, time.Second))
	check("acquire", err)
	_, err = st.Holder(Ctx(t), k)
	check("holder", err)
	_, err = st.Renew(Ctx(t), g)
	check("renew", err)
	check("release", st.Release(Ctx(t), g))
	_, _, err = st.Subscribe(Ctx(t), k)
	check("subscribe", err)
	res, err := st.RenewMany(Ctx(t), []leasehold.Grant{g, g})
	check("renew many", err)
	if len(res) != 2 {
		t.Errorf("RenewMany returned %d results for 2 grants", len(res))
	}
	lc, err := leasehold.New(st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer lc.Close()
	l, err := lc.Acquire(Ctx(t), k, leasehold.AcquireOptions{TTL: time.Second, Wait: time.Second})
	if l != nil || !errors.Is(err, leasehold.ErrStore) {
		t.Fatalf("client acquire on a dead server: %v, %v; want no lease and ErrStore", l, err)
	}
}

// A server that refuses the password: OpenURL fails naming the server and
// the cause, without showing the password.
func (e *Env) authRefused(t *testing.T) {
	s, err := testserver.StartRedis(Ctx(t), testserver.RedisOptions{Dir: e.Dir, Args: []string{"--requirepass", "s3cret"}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Stop()
	for _, u := range []string{"redis://" + s.Addr(), "redis://:badpass@" + s.Addr()} {
		st, err := e.OpenURL(Ctx(t), u)
		if err == nil {
			st.Close()
			t.Fatalf("OpenURL(%s) with a bad password succeeded", u)
		}
		if !errors.Is(err, leasehold.ErrStore) || !strings.Contains(err.Error(), s.Addr()) ||
			!(strings.Contains(err.Error(), "NOAUTH") || strings.Contains(err.Error(), "WRONGPASS")) {
			t.Errorf("OpenURL with a bad password: %v, want a store error naming the server and NOAUTH/WRONGPASS", err)
		}
		if strings.Contains(err.Error(), "badpass") {
			t.Errorf("error shows the password: %v", err)
		}
	}
	st, err := e.OpenURL(Ctx(t), "redis://:s3cret@"+s.Addr())
	if err != nil {
		t.Fatalf("OpenURL with the password: %v", err)
	}
	defer st.Close()
	g, err := st.Acquire(Ctx(t), Req("k", time.Second))
	if err != nil {
		t.Fatalf("acquire with the password: %v", err)
	}
	_ = st.Release(Ctx(t), g)
}

// A read-only replica: acquire fails with READONLY naming the server; the
// holder can still be read there.
func (e *Env) readOnlyReplica(t *testing.T) {
	st := e.open(t)
	k := Key(t, "k")
	g, err := st.Acquire(Ctx(t), Req(k, 30*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Release(Ctx(t), g)
	rep, err := testserver.StartRedis(Ctx(t), testserver.RedisOptions{Dir: e.Dir, Args: []string{"--replicaof", "127.0.0.1", strconv.Itoa(e.Server.Port)}})
	if err != nil {
		t.Fatal(err)
	}
	defer rep.Stop()
	rs, err := e.OpenURL(Ctx(t), rep.URL())
	if err != nil {
		t.Fatalf("OpenURL of the replica: %v", err)
	}
	defer rs.Close()
	// Wait for the replica to sync (set-up, not a measurement).
	for end := time.Now().Add(30 * time.Second); e.command(t, rep, "EXISTS", "leasehold:{"+k+"}:lock") != ":1"; {
		if time.Now().After(end) {
			t.Fatal("replica not in sync after 30s")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if h, err := rs.Holder(Ctx(t), k); err != nil || h.Token != g.Token {
		t.Fatalf("Holder on the replica: %+v, %v; want token %d", h, err, g.Token)
	}
	_, err = rs.Acquire(Ctx(t), Req(Key(t, "other"), 30*time.Second))
	if !errors.Is(err, leasehold.ErrStore) || !strings.Contains(err.Error(), "READONLY") || !strings.Contains(err.Error(), rep.Addr()) {
		t.Fatalf("acquire on a replica: %v, want a store error with READONLY naming %s", err, rep.Addr())
	}
}
