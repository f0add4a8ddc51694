package etcd

import (
	"context"
	"testing"
	"time"

	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/internal/testserver"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
)

// TestOrphanCleanup stands in for an acquire whose put was applied but whose
// reply was lost: housekeeping deletes such a key, and leaves a tracked grant
// with the same value alone.
func TestOrphanCleanup(t *testing.T) {
	c := testserver.NewEtcd(t, testserver.EtcdOptions{})
	cli, err := clientv3.New(clientv3.Config{Endpoints: c.Endpoints(), DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	st := New(cli, nil)
	defer st.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	req := leasehold.AcquireRequest{Key: "orphan/a", Owner: leasehold.NewOwnerID(), Label: "x", TTL: 2 * time.Second}
	g, err := st.Acquire(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	ss := g.Private.(*grantRef).sess
	lost := st.EntryKey("orphan/b", req.Owner)
	if _, err := cli.Put(ctx, lost, encodeValue(req.Label), clientv3.WithLease(ss.id)); err != nil {
		t.Fatal(err)
	}
	ss.mu.Lock()
	ss.orphans = append(ss.orphans, orphan{name: lost}, orphan{name: st.KeyOf(g)})
	ss.mu.Unlock()
	ss.poke()
	deadline := time.Now().Add(10 * time.Second)
	for {
		r, err := cli.Get(ctx, lost)
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Kvs) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the orphan of a lost acquire reply was not deleted within 10s")
		}
		time.Sleep(20 * time.Millisecond)
	}
	ss.mu.Lock()
	pending := len(ss.orphans)
	ss.mu.Unlock()
	if pending != 0 {
		t.Errorf("%d orphans still pending", pending)
	}
	if _, err := st.Renew(ctx, g); err != nil {
		t.Errorf("the tracked grant was harmed by the orphan check: %v", err)
	}
	if err := st.Release(ctx, g); err != nil {
		t.Errorf("release: %v", err)
	}
}
