package zookeeper_test

import (
	"context"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/internal/testserver"
	"github.com/leasehold-go/leasehold/zookeeper"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// serverOpts are the test ensembles' options: 100 ms ticks, sessions from
// 200 ms (so the minimum TTL is 200 ms) to 5 minutes (TTLs up to 2.5 min,
// as the conformance suite asks for a minute).
func serverOpts(nodes int) testserver.ZooKeeperOptions {
	return testserver.ZooKeeperOptions{Nodes: nodes, MaxSession: 5 * time.Minute}
}

// openURL opens a store (closed by Close) and fails t if it cannot.
func openURL(t testing.TB, url string) *zookeeper.Store {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s, err := zookeeper.OpenURL(ctx, url)
	if err != nil {
		t.Fatalf("OpenURL(%s): %v", url, err)
	}
	return s
}

// tctx returns a context that ends when t does, or after 30 s.
func tctx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func areq(key string, ttl time.Duration) leasehold.AcquireRequest {
	return leasehold.AcquireRequest{Key: key, Owner: leasehold.NewOwnerID(), Label: "test", TTL: ttl}
}
