package etcd_test

import (
	"context"
	"testing"
	"time"

	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/internal/servetest"
	"github.com/leasehold-go/leasehold/internal/testserver"
	"github.com/leasehold-go/leasehold/leasetest"
)

// TestRemoteConformance runs the shared suite through the remote store
// and a leasehold server in front of a real etcd: the server's watch
// streams carry etcd's native watch (mode=watch), waits go through etcd's
// own queue (AcquireWait), renewals in batches, and its grants are
// kept under handles (an etcd grant carries its session). Restart
// restarts the server; etcd's grants are portable, so a grant the new
// server does not know is rebuilt from its key, owner and token.
func TestRemoteConformance(t *testing.T) {
	c := testserver.NewEtcd(t, testserver.EtcdOptions{})
	backend := openURL(t, c.URL())
	t.Cleanup(func() { _ = backend.Close() })
	srv := servetest.Start(t, backend)
	probe := srv.Open(t)
	if _, ok := probe.(leasehold.Watcher); !ok {
		t.Fatal("the remote store in front of etcd is not a Watcher")
	}
	// etcd queues waiters and renews in batches: through the server too,
	// so the suite's waits go through etcd's queue (queue: true) and its
	// renewals through renew-many.
	if _, ok := probe.(leasehold.Waiter); !ok {
		t.Fatal("the remote store in front of etcd is not a Waiter")
	}
	if _, ok := probe.(leasehold.BatchRenewer); !ok {
		t.Fatal("the remote store in front of etcd is not a BatchRenewer")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ch, stop, err := probe.(leasehold.Watcher).Watch(ctx, "watched")
	if err != nil {
		t.Fatal(err)
	}
	g, err := probe.Acquire(ctx, leasehold.AcquireRequest{Key: "watched", Owner: "0123456789abcdef0123456789abcdef", TTL: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	<-ch // etcd's watch saw the grant, through the server's stream
	stop()
	_ = probe.Release(ctx, g)
	// The served store's sessions (their keepalives and housekeeping, its
	// gRPC streams) start during the suite and live as long as the store.
	ignore := append(servetest.IgnoreGoroutines(),
		"github.com/leasehold-go/leasehold/internal/sessionpool.(*Core[...]).KeepAlive",
		"github.com/leasehold-go/leasehold/internal/sessionpool.Housekeep",
		"github.com/leasehold-go/leasehold/etcd.openKeepAlive",
		"google.golang.org/grpc.newClientStreamWithParams.func4",
		"google.golang.org/grpc/internal/transport.(*recvBufferReader).readMessageHeaderClient")
	leasetest.Run(t, leasetest.Config{Open: srv.Open, ShortTTL: time.Second, Restart: srv.Restart, IgnoreGoroutines: ignore})
}
