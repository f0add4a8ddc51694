package sqlite

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/internal/servetest"
	"github.com/leasehold-go/leasehold/leasetest"
)

// serveSQLite serves a new sqlite store through a leasehold server (package
// serve) on a loopback port until t ends.
func serveSQLite(t *testing.T) *servetest.Server {
	t.Helper()
	st, err := Open(ctxT(t), filepath.Join(t.TempDir(), "served.db"), nil)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { _ = st.Close() })
	return servetest.Start(t, st)
}

// TestRemoteConformance runs the shared suite through the remote store, a
// leasehold server and a real sqlite store; Restart restarts the server.
// The served store's wake-up watch starts with the first waiter and lives
// as long as the store, past the suite's goroutine check.
func TestRemoteConformance(t *testing.T) {
	srv := serveSQLite(t)
	ignore := append(servetest.IgnoreGoroutines(), "github.com/leasehold-go/leasehold/sqlite.(*watch).run")
	leasetest.Run(t, leasetest.Config{ShortTTL: time.Second, Open: srv.Open, Restart: srv.Restart, IgnoreGoroutines: ignore})
}

// TestRemoteRenewAfterServerRestart: sqlite's grants are portable, so the
// server keeps nothing: a grant taken before the server restarted renews
// and releases through the new one.
func TestRemoteRenewAfterServerRestart(t *testing.T) {
	srv := serveSQLite(t)
	st := srv.Open(t)
	ctx := context.Background()
	g, err := st.Acquire(ctx, leasehold.AcquireRequest{Key: "k", Owner: "0123456789abcdef0123456789abcdef", TTL: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if g.Private != nil {
		t.Errorf("a portable grant carries a handle: %v", g.Private)
	}
	srv.Restart(t)
	if _, err := st.Renew(ctx, g); err != nil {
		t.Errorf("renew after the server restarted: %v", err)
	}
	if err := st.Release(ctx, g); err != nil {
		t.Errorf("release after the server restarted: %v", err)
	}
}
