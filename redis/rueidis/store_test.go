package rueidis_test

import (
	"testing"

	"github.com/redis/rueidis"

	lhredis "github.com/leasehold-go/leasehold/redis"
	"github.com/leasehold-go/leasehold/redis/internal/storetest"
	lhrueidis "github.com/leasehold-go/leasehold/redis/rueidis"
)

func newClient(t testing.TB, addr string) rueidis.Client {
	t.Helper()
	c, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{addr}, DisableCache: true})
	if err != nil {
		t.Fatalf("rueidis.NewClient(%s): %v", addr, err)
	}
	t.Cleanup(c.Close)
	return c
}

func newAdapter(t testing.TB, addr string) lhredis.Client {
	a, err := lhrueidis.NewClient(newClient(t, addr))
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func TestStore(t *testing.T) {
	storetest.Run(t, storetest.Env{Server: srv, Dir: tmp, OpenURL: lhrueidis.OpenURL, NewClient: newAdapter})
}

func TestRedlock(t *testing.T) {
	storetest.RunRedlock(t, storetest.RedlockEnv{Masters: masters, OpenURL: lhrueidis.OpenRedlockURL, NewClient: newAdapter})
}
