package zookeeper_test

import (
	"context"
	"testing"
	"time"

	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/internal/testserver"
	"github.com/leasehold-go/leasehold/leasetest"
)

// restartAll kills every server and starts them again on their data.
func restartAll(t testing.TB, z *testserver.ZooKeeper) {
	t.Helper()
	for i := range z.Nodes {
		z.Kill(i)
	}
	for i := range z.Nodes {
		if err := z.Restart(i); err != nil {
			t.Fatalf("restart %d: %v", i, err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	if err := z.WaitServing(ctx); err != nil {
		t.Fatalf("after restart: %v\n%s", err, z.Logs())
	}
}

func conformance(t *testing.T, z *testserver.ZooKeeper) {
	leasetest.Run(t, leasetest.Config{
		Open:     func(t testing.TB) leasehold.Store { return openURL(t, z.URL("/conformance")) },
		ShortTTL: time.Second,
		Restart:  func(t testing.TB) { restartAll(t, z) },
	})
}

// TestStandalone runs the conformance suite and the store's own tests on
// one standalone server.
func TestStandalone(t *testing.T) {
	z := testserver.NewZooKeeper(t, serverOpts(1))
	t.Run("conformance", func(t *testing.T) { conformance(t, z) })
}

// TestEnsemble runs the conformance suite on a 3-server ensemble, then
// kills its leader under contention.
func TestEnsemble(t *testing.T) {
	z := testserver.NewZooKeeper(t, serverOpts(3))
	t.Run("conformance", func(t *testing.T) { conformance(t, z) })
}
