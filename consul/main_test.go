package consul_test

import (
	"context"
	"testing"
	"time"

	"github.com/hashicorp/consul/api"
	"go.uber.org/goleak"

	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/consul"
	"github.com/leasehold-go/leasehold/internal/testserver"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// openURL opens a store on its own client and fails t if it cannot.
func openURL(t testing.TB, url string) *consul.Store {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s, err := consul.OpenURL(ctx, url)
	if err != nil {
		t.Fatalf("OpenURL(%s): %v", url, err)
	}
	return s
}

// newStore opens a store on agent i of c, closed when t ends.
func newStore(t testing.TB, c *testserver.Consul, i int) *consul.Store {
	t.Helper()
	s := openURL(t, c.URL(i))
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// consulClient returns a plain Consul client on agent i of c.
func consulClient(t testing.TB, c *testserver.Consul, i int) *api.Client {
	t.Helper()
	cfg := api.DefaultNonPooledConfig()
	cfg.Address = c.Agents[i].Addr()
	cfg.Token = ""
	cli, err := api.NewClient(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return cli
}

func tctx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func areq(key string, ttl time.Duration) leasehold.AcquireRequest {
	return leasehold.AcquireRequest{Key: key, Owner: leasehold.NewOwnerID(), Label: "consul-test", TTL: ttl}
}

// uniqueKey returns a key unique to the test.
func uniqueKey(t testing.TB, suffix string) string {
	return t.Name() + "/" + time.Now().Format("150405.000000000") + "/" + suffix
}

// eventually polls cond every 20 ms until it holds or limit passes.
func eventually(t testing.TB, limit time.Duration, what string, cond func() bool) {
	t.Helper()
	end := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(end) {
			t.Fatalf("no %s within %s", what, limit)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
