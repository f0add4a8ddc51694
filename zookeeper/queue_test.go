package zookeeper_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/internal/testserver"
)

// TestQueue runs the store's queue tests on a server that checks its
// container nodes every 100 ms.
func TestQueue(t *testing.T) {
	z := testserver.NewZooKeeper(t, testserver.ZooKeeperOptions{MaxSession: time.Minute,
		JVMFlags: []string{"-Dznode.container.checkIntervalMs=100"}})
	t.Run("waiting_is_fifo", func(t *testing.T) { testFIFO(t, z) })
	t.Run("keys_never_prefix_of_another", func(t *testing.T) { testPrefixIsolation(t, z) })
	t.Run("empty_parents_are_removed", func(t *testing.T) { testContainers(t, z) })
}

// testFIFO queues waiters one after another behind a holder: each gets
// the key in the order it joined, with increasing tokens.
func testFIFO(t *testing.T, z *testserver.ZooKeeper) {
	st := openURL(t, z.URL("/fifo"))
	defer st.Close()
	raw := rawConn(t, z)
	holder, err := st.Acquire(tctx(t), areq("k", 5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	parent := st.ParentOf("k")
	var (
		mu    sync.Mutex
		order []int
		last  = holder.Token
		wg    sync.WaitGroup
	)
	const waiters = 5
	for i := range waiters {
		wg.Go(func() {
			g, err := st.AcquireWait(tctx(t), areq("k", 5*time.Second))
			if err != nil {
				t.Errorf("waiter %d: %v", i, err)
				return
			}
			mu.Lock()
			order = append(order, i)
			if g.Token <= last {
				t.Errorf("waiter %d: token %d not greater than %d", i, g.Token, last)
			}
			last = g.Token
			mu.Unlock()
			if err := st.Release(tctx(t), g); err != nil {
				t.Errorf("waiter %d: release: %v", i, err)
			}
		})
		// The next waiter joins once this one's node is in the queue.
		eventually(t, 10*time.Second, fmt.Sprintf("waiter %d queued", i), func() bool {
			kids, _, err := raw.Children(parent)
			return err == nil && len(kids) == i+2
		})
	}
	if err := st.Release(tctx(t), holder); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	if fmt.Sprint(order) != "[0 1 2 3 4]" {
		t.Errorf("waiters got the key in the order %v, want the order they joined", order)
	}
}

// testPrefixIsolation holds "a" and checks that "a/x", "ab" and "a%2Fx"
// are independent keys, each its own parent node.
func testPrefixIsolation(t *testing.T, z *testserver.ZooKeeper) {
	st := openURL(t, z.URL("/prefix"))
	defer st.Close()
	var gs []leasehold.Grant
	for _, k := range []string{"a", "a/x", "ab", "a%2Fx", ".", "..", "ü/😀"} {
		g, err := st.Acquire(tctx(t), areq(k, 5*time.Second))
		if err != nil {
			t.Fatalf("acquire %q while the others are held: %v", k, err)
		}
		if p := st.ParentOf(k); strings.Count(p, "/") != 2 {
			t.Errorf("key %q has parent %s, not one node under the base", k, p)
		}
		gs = append(gs, g)
	}
	for _, g := range gs {
		_ = st.Release(tctx(t), g)
	}
}

// testContainers grants and releases many one-off keys: the server deletes
// their emptied parents (container nodes), so they leave nothing.
func testContainers(t *testing.T, z *testserver.ZooKeeper) {
	st := openURL(t, z.URL("/containers"))
	defer st.Close()
	raw := rawConn(t, z)
	for i := range 50 {
		g, err := st.Acquire(tctx(t), areq(fmt.Sprint("once-", i), 5*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		if err := st.Release(tctx(t), g); err != nil {
			t.Fatal(err)
		}
	}
	eventually(t, 30*time.Second, "the 50 emptied key nodes removed", func() bool {
		kids, _, err := raw.Children("/containers")
		return err == nil && len(kids) == 0
	})
}
