package goredis_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/redis/goredis"
	"github.com/leasehold-go/leasehold/redis/internal/redistest"
	"github.com/leasehold-go/leasehold/redis/internal/storetest"
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
	s, err := goredis.OpenRedlockURL(storetest.Ctx(t), redlockURL(ss))
	if err != nil {
		t.Fatalf("OpenRedlockURL: %v", err)
	}
	return s
}

func TestRedlock(t *testing.T) {
	storetest.RunRedlock(t, storetest.RedlockEnv{Masters: masters, Open: openRedlock})
}

// OpenRedlockURL: bad URLs and a minority of reachable masters fail.
func TestOpenRedlockURLErrors(t *testing.T) {
	ctx := storetest.Ctx(t)
	dead := "127.0.0.1:1"
	for _, u := range []string{
		"redis://" + masters[0].Addr(),
		"redlock://",
		"redlock://host-without-port",
		"redlock://" + masters[0].Addr() + "/x",
		"redlock://" + masters[0].Addr() + "?unknown=1",
		"redlock://" + masters[0].Addr() + "," + dead + "," + dead,
	} {
		s, err := goredis.OpenRedlockURL(ctx, u)
		if err == nil {
			s.Close()
			t.Errorf("OpenRedlockURL(%q) succeeded", u)
			continue
		}
		if !errors.Is(err, leasehold.ErrStore) {
			t.Errorf("OpenRedlockURL(%q): %v, want ErrStore", u, err)
		}
	}
	s, err := goredis.OpenRedlockURL(ctx, "redlock://"+masters[0].Addr()+","+masters[1].Addr()+","+dead+"?prefix=p:")
	if err != nil {
		t.Fatalf("OpenRedlockURL with 2 of 3 up: %v", err)
	}
	s.Close()
}

// Clients the caller owns are not closed by the store.
func TestRedlockUserClients(t *testing.T) {
	var cs []*redis.Client
	for _, m := range masters {
		c := redis.NewClient(&redis.Options{Addr: m.Addr()})
		defer c.Close()
		cs = append(cs, c)
	}
	st, err := goredis.NewRedlock(cs, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := storetest.Ctx(t)
	g, err := st.Acquire(ctx, storetest.Req("user-clients", 30*time.Second))
	if err != nil {
		t.Fatalf("acquire: %v", err)
	}
	if err := st.Release(ctx, g); err != nil {
		t.Fatalf("release: %v", err)
	}
	st.Close()
	for _, c := range cs {
		if err := c.Ping(ctx).Err(); err != nil {
			t.Fatalf("caller's client closed by the store: %v", err)
		}
	}
}
