package goredis_test

import (
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/leasetest"
	"github.com/leasehold-go/leasehold/redis/goredis"
)

// The store made by OpenURL (which owns its client), with server restarts.
func TestConformanceOpenURL(t *testing.T) {
	leasetest.Run(t, leasetest.Config{
		Open: func(t testing.TB) leasehold.Store {
			s, err := goredis.OpenURL(ctxT(t), srv.URL())
			if err != nil {
				t.Fatalf("OpenURL: %v", err)
			}
			return s
		},
		Restart: func(t testing.TB) { restartAll(t, srv) },
	})
}

// The store over a client the caller owns, in another key prefix.
func TestConformanceUserClient(t *testing.T) {
	c := redis.NewClient(&redis.Options{Addr: srv.Addr(), ContextTimeoutEnabled: true})
	defer c.Close()
	leasetest.Run(t, leasetest.Config{
		Open: func(t testing.TB) leasehold.Store {
			s, err := goredis.New(c, &goredis.Options{Prefix: "user-client:"})
			if err != nil {
				t.Fatalf("New: %v", err)
			}
			return s
		},
	})
	// The stores were closed; the caller's client must still work.
	if err := c.Ping(ctxT(t)).Err(); err != nil {
		t.Fatalf("the caller's client after the stores closed: %v", err)
	}
}
