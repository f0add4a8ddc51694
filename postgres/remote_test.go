package postgres_test

import (
	"testing"

	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/internal/servetest"
	"github.com/leasehold-go/leasehold/leasetest"
	"github.com/leasehold-go/leasehold/postgres"
)

// remoteConformance runs the shared suite through the remote store, a
// leasehold server (package serve) and a real PostgreSQL in mode. Restart
// restarts PostgreSQL and then the leasehold server: a lease-row grant is
// portable and renews through the new server; an advisory grant is bound
// to its session, kept under a handle, and ends with either restart.
func remoteConformance(t *testing.T, mode postgres.Mode) {
	opts := postgres.Options{Mode: mode, Schema: freshSchema(t)}
	if err := postgres.Migrate(ctxT(t), newPool(t), opts); err != nil {
		t.Fatalf("Migrate: %v", err)
	}
	backend := openPool(t, opts)
	t.Cleanup(func() { _ = backend.Close() })
	s := servetest.Start(t, backend)
	restart := func(t testing.TB) {
		if err := srv.Restart(ctxT(t)); err != nil {
			t.Fatalf("restart: %v", err)
		}
		s.Restart(t)
	}
	_, lister := backend.(leasehold.Lister)
	if _, ok := s.Open(t).(leasehold.Lister); ok != lister {
		t.Fatalf("the remote store in front of postgres (%v) is a Lister: %v, the store: %v", mode, ok, lister)
	}
	// The served store's LISTEN connection starts with the first waiter and
	// lives as long as the store, past the suite's goroutine check. So may
	// the session watcher of an advisory grant the server keeps: one a
	// restart abandoned (as a crash would), or one whose TTL passed just
	// before the check, lives on in the served store until PostgreSQL ends
	// its session (idle_session_timeout, the TTL) or the server's sweeper
	// releases it (the check failed once so in ./scripts/test).
	ignore := append(servetest.IgnoreGoroutines(),
		"github.com/leasehold-go/leasehold/postgres.(*listener).serve.func1",
		"github.com/leasehold-go/leasehold/postgres.(*listener).wait.func1",
		"github.com/leasehold-go/leasehold/postgres.(*advLease).beginWatch.func1")
	leasetest.Run(t, leasetest.Config{ShortTTL: shortTTL, Open: s.Open, Restart: restart, IgnoreGoroutines: ignore})
}

func TestRemoteConformanceLeaseRow(t *testing.T) { remoteConformance(t, postgres.LeaseRow) }

func TestRemoteConformanceAdvisory(t *testing.T) { remoteConformance(t, postgres.Advisory) }
