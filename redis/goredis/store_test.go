package goredis_test

import (
	"testing"

	"github.com/redis/go-redis/v9"

	lhredis "github.com/leasehold-go/leasehold/redis"
	"github.com/leasehold-go/leasehold/redis/goredis"
	"github.com/leasehold-go/leasehold/redis/internal/storetest"
)

func newClient(t testing.TB, addr string) lhredis.Client {
	c := redis.NewClient(&redis.Options{Addr: addr, ContextTimeoutEnabled: true, MaxRetries: -1, DialerRetries: 1})
	t.Cleanup(func() { c.Close() })
	a, err := goredis.NewClient(c)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func TestStore(t *testing.T) {
	storetest.Run(t, storetest.Env{Server: srv, Dir: tmp, OpenURL: goredis.OpenURL, NewClient: newClient})
}

func TestRingRefused(t *testing.T) {
	r := redis.NewRing(&redis.RingOptions{Addrs: map[string]string{"a": srv.Addr()}})
	defer r.Close()
	if _, err := goredis.New(r, nil); err == nil {
		t.Fatal("New accepted a *redis.Ring")
	}
}
