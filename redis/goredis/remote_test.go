package goredis_test

import (
	"context"
	"testing"
	"time"

	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/internal/servetest"
	"github.com/leasehold-go/leasehold/leasetest"
	"github.com/leasehold-go/leasehold/redis/goredis"
	"github.com/leasehold-go/leasehold/redis/internal/storetest"
)

// TestRemoteConformance runs the shared suite through the remote store, a
// leasehold server (package serve) and a real redis-server under the
// go-redis adapter. Restart restarts the redis-server (without
// persistence) and then the leasehold server, so the suite's restart
// check covers both: redis's grants are portable, so nothing the server
// kept is lost, and the tokens still increase.
func TestRemoteConformance(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	backend, err := goredis.OpenURL(ctx, srv.URL()+"?prefix=remote:")
	if err != nil {
		t.Fatalf("OpenURL: %v", err)
	}
	t.Cleanup(func() { _ = backend.Close() })
	s := servetest.Start(t, backend)
	restart := func(t testing.TB) {
		storetest.Restart(t, srv)
		s.Restart(t)
	}
	if _, ok := s.Open(t).(leasehold.Lister); !ok {
		t.Fatal("the remote store in front of redis is not a Lister")
	}
	// The served store's subscription (its notifier and the go-redis
	// pubsub loop under it) starts with the first waiter and lives as long
	// as the store, past the suite's goroutine check.
	ignore := append(servetest.IgnoreGoroutines(),
		"github.com/leasehold-go/leasehold/redis/internal/core.(*Notifier).watch",
		"github.com/leasehold-go/leasehold/redis/goredis.(*subscription).loop")
	leasetest.Run(t, leasetest.Config{ShortTTL: time.Second, Open: s.Open, Restart: restart, IgnoreGoroutines: ignore})
}
