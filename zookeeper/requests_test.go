package zookeeper_test

import (
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/leasehold-go/leasehold/internal/testserver"
)

// packetsReceived returns the packets server node i of z has received
// from clients (mntr's zk_packets_received): requests and pings.
func packetsReceived(t *testing.T, z *testserver.ZooKeeper, i int) int64 {
	t.Helper()
	n, err := testserver.PacketsReceived(tctx(t), z.Nodes[i].Addr())
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestRequestsPerCycle counts the requests of acquire+release cycles on a
// key this store has seen before (its parent verified): a multi that
// creates the node and rewrites the parent's mark (whose answer tells the
// token and that the node is alone in the queue), then the release's
// delete, 2 requests where the store sent 4 before (create, list, read
// the node, delete) and go-zookeeper's zk.Lock sends 3. The token is still
// the node's creation zxid, as a raw read shows.
func TestRequestsPerCycle(t *testing.T) {
	z := testserver.NewZooKeeper(t, serverOpts(1))
	st := openURL(t, z.URL("/requests"))
	defer st.Close()
	const key, n = "cycle", 50
	cycle := func() {
		g, err := st.Acquire(tctx(t), areq(key, time.Minute))
		if err != nil {
			t.Fatal(err)
		}
		if err := st.Release(tctx(t), g); err != nil {
			t.Fatal(err)
		}
	}
	cycle() // the first acquire of the key reads its queue: the parent is verified
	before := packetsReceived(t, z, 0)
	for range n {
		cycle()
	}
	// Slack for the session's pings (one per 40 s with a minute's TTL) and
	// mntr's own connection.
	if got := packetsReceived(t, z, 0) - before; got > 2*n+5 {
		t.Fatalf("%d acquire+release cycles: the server received %d packets, want at most %d (2 requests a cycle)", n, got, 2*n+5)
	}
	raw := rawConn(t, z)
	checkToken := func(what string) {
		t.Helper()
		g, err := st.Acquire(tctx(t), areq(key, time.Minute))
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = st.Release(tctx(t), g) }()
		kids, _, err := raw.Children(st.ParentOf(key))
		if err != nil || len(kids) != 1 {
			t.Fatalf("%s: the key's queue: %v, %v; want the grant's node alone", what, kids, err)
		}
		_, stat, err := raw.Get(st.ParentOf(key) + "/" + kids[0])
		if err != nil {
			t.Fatal(err)
		}
		if g.Token != uint64(stat.Czxid) {
			t.Fatalf("%s: token %d, want the node's creation zxid %d", what, g.Token, stat.Czxid)
		}
	}
	checkToken("on the verified parent")
	// The parent deleted and made again: the store's memory of it is stale
	// (another creation zxid), and the acquire reads its node instead.
	if err := raw.Delete(st.ParentOf(key), -1); err != nil {
		t.Fatal(err)
	}
	if _, err := raw.CreateContainer(st.ParentOf(key), []byte("leasehold key"), zk.FlagContainer, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	checkToken("on a parent made again")
}
