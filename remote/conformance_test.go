package remote_test

import (
	"testing"
	"time"

	"github.com/leasehold-go/leasehold/internal/servetest"
	"github.com/leasehold-go/leasehold/leasetest"
	"github.com/leasehold-go/leasehold/memory"
)

// TestConformanceMemory runs the conformance suite through the server in
// front of a memory store, whose grants the server keeps under handles;
// Restart restarts the server. The short TTL is a second, as in front of
// sqlite and etcd: at the default 300 ms, a grant that crossed the HTTP hop
// on a machine at load 9 to 38 arrived after its holder's deadline
// (election_observer_sees_each_leader_and_store_loss failed twice so).
func TestConformanceMemory(t *testing.T) {
	srv := servetest.Start(t, memory.New(nil))
	leasetest.Run(t, leasetest.Config{Open: srv.Open, ShortTTL: time.Second, Restart: srv.Restart, IgnoreGoroutines: servetest.IgnoreGoroutines()})
}
