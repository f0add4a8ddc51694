package sqlite

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/internal/servetest"
	"github.com/leasehold-go/leasehold/leasetest"
	"github.com/leasehold-go/leasehold/remote"
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

// TestRemoteServersFailover: two servers (replicas) in front of one sqlite
// file, each with its own store; a remote store names both. Once the first
// is killed, the client goes on through the second: a portable grant
// taken through the first renews and releases through it, and acquires go
// to it.
func TestRemoteServersFailover(t *testing.T) {
	path := filepath.Join(t.TempDir(), "served.db")
	var srv [2]*servetest.Server
	for i := range srv {
		st, err := Open(ctxT(t), path, nil)
		if err != nil {
			t.Fatalf("Open: %v", err)
		}
		t.Cleanup(func() { _ = st.Close() })
		srv[i] = servetest.Start(t, st)
	}
	ctx := context.Background()
	rs, err := remote.Open(ctx, srv[0].URL, &remote.Options{Servers: []string{srv[1].URL}})
	if err != nil {
		t.Fatal(err)
	}
	defer rs.Close()
	req := leasehold.AcquireRequest{Key: "k", Owner: "0123456789abcdef0123456789abcdef", TTL: time.Minute}
	g, err := rs.Acquire(ctx, req)
	if err != nil || g.Private != nil {
		t.Fatalf("acquire through the first server: %+v, %v; want a portable grant", g, err)
	}
	srv[0].Kill()
	if _, err := rs.Renew(ctx, g); err != nil {
		t.Errorf("renew of the first server's portable grant through the second: %v", err)
	}
	req.Key, req.Owner = "k2", "fedcba9876543210fedcba9876543210"
	g2, err := rs.Acquire(ctx, req)
	if err != nil || g2.Token != 1 {
		t.Fatalf("acquire with the first server killed: %+v, %v; want it granted through the second", g2, err)
	}
	if h, err := rs.Holder(ctx, "k"); err != nil || h.Token != g.Token {
		t.Errorf("holder of k through the second server: %+v, %v; want token %d", h, err, g.Token)
	}
	for _, gr := range []leasehold.Grant{g, g2} {
		if err := rs.Release(ctx, gr); err != nil {
			t.Errorf("release of %s through the second server: %v", gr.Key, err)
		}
	}
}
