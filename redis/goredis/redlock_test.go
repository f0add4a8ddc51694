package goredis_test

import (
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/leasehold-go/leasehold/redis/goredis"
	"github.com/leasehold-go/leasehold/redis/internal/storetest"
)

func TestRedlock(t *testing.T) {
	storetest.RunRedlock(t, storetest.RedlockEnv{Masters: masters, OpenURL: goredis.OpenRedlockURL, NewClient: newClient})
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
