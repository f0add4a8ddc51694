package etcd_test

import (
	"context"
	"testing"
	"time"

	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/etcd"
	"github.com/leasehold-go/leasehold/internal/testserver"
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
func restartAll(t testing.TB, c *testserver.Etcd) {
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

func conformance(t *testing.T, c *testserver.Etcd) {
	leasetest.Run(t, leasetest.Config{
		Open:     func(t testing.TB) leasehold.Store { return openURL(t, c.URL()) },
		ShortTTL: time.Second,
		Restart:  func(t testing.TB) { restartAll(t, c) },
	})
}

// TestSingleNode runs the conformance suite and the store's own tests on
// one etcd process.
func TestSingleNode(t *testing.T) {
	c := testserver.NewEtcd(t, testserver.EtcdOptions{})
	t.Run("conformance", func(t *testing.T) { conformance(t, c) })
	t.Run("one_etcd_lease_per_ttl_class", func(t *testing.T) { testSharedSession(t, c) })
	t.Run("session_loss_closes_lost_and_cancels_leases", func(t *testing.T) { testSessionLoss(t, c) })
	t.Run("close_stops_keepalive_but_does_not_release", func(t *testing.T) { testCloseKeeps(t, c) })
	t.Run("idle_session_revoked", func(t *testing.T) { testIdleRevoked(t, c) })
	t.Run("keys_never_prefix_of_another", func(t *testing.T) { testPrefixIsolation(t, c) })
	t.Run("acquisitions_reuse_a_bounded_set_of_names", func(t *testing.T) { testBoundedNames(t, c) })
	t.Run("rebuilt_grant_renews_fences_and_releases", func(t *testing.T) { testRebuiltGrant(t, c) })
	t.Run("waiting_is_fifo", func(t *testing.T) { testFIFO(t, c) })
	t.Run("waiter_that_leaves_is_dequeued", func(t *testing.T) { testWaiterLeaves(t, c) })
	t.Run("subscribe_wakes_on_release", func(t *testing.T) { testSubscribe(t, c) })
	t.Run("renew_many", func(t *testing.T) { testRenewMany(t, c) })
	t.Run("fence_is_owner", func(t *testing.T) { testIsOwner(t, c) })
	t.Run("fence_stored_token", func(t *testing.T) { testFencedTxn(t, c) })
	t.Run("ttl_rounded_up_to_seconds", func(t *testing.T) { testTTLRounding(t, c) })
	t.Run("planted_entries_are_refused", func(t *testing.T) { testPlanted(t, c) })
}

// TestCluster runs the conformance suite on a 3-node cluster, then kills its
// leader under contention, then takes its quorum away.
func TestCluster(t *testing.T) {
	c := testserver.NewEtcd(t, testserver.EtcdOptions{Nodes: 3})
	t.Run("conformance", func(t *testing.T) { conformance(t, c) })
	t.Run("renew_of_a_fresh_grant_reads_it", func(t *testing.T) { testRenewFreshGrant(t, c) })
	t.Run("leader_kill_under_fenced_contention", func(t *testing.T) { testFailover(t, c) })
	t.Run("no_quorum_is_a_clear_error", func(t *testing.T) { testNoQuorum(t, c) })
}
