package etcd_test

import (
	"context"
	"testing"
	"time"

	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/etcd"
	"github.com/leasehold-go/leasehold/etcd/internal/etcdtest"
	"github.com/leasehold-go/leasehold/leasetest"
)

// openURL opens a store on its own client (closed by Close) and fails t if
// it cannot.
func openURL(t testing.TB, url string) *etcd.Store {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s, err := etcd.OpenURL(ctx, url)
	if err != nil {
		t.Fatalf("OpenURL(%s): %v", url, err)
	}
	return s
}

// restartAll kills every member and starts them again on their data.
func restartAll(t testing.TB, c *etcdtest.Cluster) {
	t.Helper()
	for i := range c.Nodes {
		c.Kill(i)
	}
	for i := range c.Nodes {
		if err := c.Restart(i); err != nil {
			t.Fatalf("restart %s: %v", c.Nodes[i].Name, err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := c.WaitHealthy(ctx); err != nil {
		t.Fatalf("after restart: %v\n%s", err, c.Logs())
	}
}

func conformance(t *testing.T, c *etcdtest.Cluster) {
	leasetest.Run(t, leasetest.Config{
		Open:     func(t testing.TB) leasehold.Store { return openURL(t, c.URL()) },
		ShortTTL: time.Second,
		Restart:  func(t testing.TB) { restartAll(t, c) },
	})
}

func TestConformanceSingleNode(t *testing.T) {
	c := etcdtest.Start(t, etcdtest.Options{})
	conformance(t, c)
}

func TestConformanceCluster(t *testing.T) {
	c := etcdtest.Start(t, etcdtest.Options{Nodes: 3})
	conformance(t, c)
}
