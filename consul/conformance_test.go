package consul_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/internal/testserver"
	"github.com/leasehold-go/leasehold/leasetest"
)

// restartAll kills every server and starts them again on their data.
func restartAll(t testing.TB, c *testserver.Consul) {
	t.Helper()
	for i := range c.Agents {
		c.Kill(i)
	}
	for i := range c.Agents {
		if err := c.Restart(i); err != nil {
			t.Fatalf("restart %s: %v", c.Agents[i].Name, err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := c.WaitServing(ctx); err != nil {
		t.Fatalf("after restart: %v\n%s", err, c.Logs())
	}
}

// conformance runs the suite on stores opened on agent i of c. ShortTTL is
// the store's MinTTL (1 s): grants shorter than Consul's 10 s session
// minimum are ended by the store's own sweep, so the expiry rules run in
// seconds.
func conformance(t *testing.T, c *testserver.Consul, i int, restart bool) {
	cfg := leasetest.Config{
		Open:     func(t testing.TB) leasehold.Store { return openURL(t, c.URL(i)) },
		ShortTTL: time.Second,
	}
	if restart {
		cfg.Restart = func(t testing.TB) { restartAll(t, c) }
	}
	leasetest.Run(t, cfg)
}

// TestDevAgent runs the conformance suite and the store's own tests on one
// dev agent (its state in memory, so no restart rule: a restarted dev agent
// starts its Raft index again, see TokenCaveat).
func TestDevAgent(t *testing.T) {
	c := testserver.NewConsul(t, testserver.ConsulOptions{})
	t.Run("conformance", func(t *testing.T) { conformance(t, c, 0, false) })
	t.Run("one_session_per_ttl_class", func(t *testing.T) { testSharedSession(t, c) })
	t.Run("session_loss_closes_lost_and_cancels_leases", func(t *testing.T) { testSessionLoss(t, c) })
	t.Run("token_increases_when_the_entry_is_deleted", func(t *testing.T) { testDeletedKey(t, c) })
	t.Run("close_keeps_grants_another_store_renews_and_releases", func(t *testing.T) { testCloseKeeps(t, c) })
	t.Run("entry_unlocked_behind_the_store_is_refused", func(t *testing.T) { testExternalUnlock(t, c) })
	t.Run("session_expired_while_partitioned", func(t *testing.T) { testPartition(t, c) })
}

// TestCluster runs the conformance suite on a 3-server cluster (with the
// restart rule: every server killed and restarted on its data), then kills
// its leader under contention.
func TestCluster(t *testing.T) {
	c := testserver.NewConsul(t, testserver.ConsulOptions{Servers: 3})
	if info := openURL(t, c.URL(1)).Info(); !info.SafeTokens || strings.Contains(info.TokenCaveat, "-dev agent,") {
		t.Errorf("Info on a cluster of servers: %+v; want SafeTokens and no -dev caveat", info)
	}
	t.Run("conformance", func(t *testing.T) { conformance(t, c, 1, true) })
	t.Run("leader_kill_under_fenced_contention", func(t *testing.T) { testFailover(t, c) })
}
