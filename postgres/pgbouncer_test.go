package postgres_test

import (
	"errors"
	"testing"
	"time"

	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/internal/testserver"
	"github.com/leasehold-go/leasehold/leasetest"
	"github.com/leasehold-go/leasehold/postgres"
)

// TestPgBouncerTransactionPooling runs the conformance suite on the
// lease-row mode through PgBouncer in transaction pooling mode: every
// statement may land on a different server connection, so the store must
// keep no session state. LISTEN needs a session of its own, so the notifier
// connects to the server directly (the listen parameter).
func TestPgBouncerTransactionPooling(t *testing.T) {
	b, err := testserver.StartBouncer(ctxT(t), srv)
	if err != nil {
		t.Fatalf("PgBouncer: %v", err)
	}
	defer b.Stop()
	schema := freshSchema(t)
	// cancel=close: PgBouncer 1.18 can crash on a cancel request whose
	// client leaves early (the abandoned-acquire rule makes that routine).
	u := b.ConnString("pool_max_conns=20", "schema="+schema, "listen="+srv.ConnString(), "cancel=close")
	if err := postgres.MigrateURL(ctxT(t), u); err != nil {
		t.Fatalf("MigrateURL through PgBouncer: %v", err)
	}

	// Check that PgBouncer really pools by transaction: after client 1's
	// statement, client 2's transaction gets the same server backend (idle
	// again; PgBouncer reuses the last used one), and client 1's next
	// statement runs on another backend. In session mode client 1 would keep
	// its backend and client 2 would get another.
	pool := newBouncerPool(t, b)
	conn, err := pool.Acquire(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	var pid1, pid2 int
	if err := conn.QueryRow(ctxT(t), "SELECT pg_backend_pid()").Scan(&pid1); err != nil {
		t.Fatal(err)
	}
	tx, err := pool.Begin(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	var txPID int
	if err := tx.QueryRow(ctxT(t), "SELECT pg_backend_pid()").Scan(&txPID); err != nil {
		t.Fatal(err)
	}
	if err := conn.QueryRow(ctxT(t), "SELECT pg_backend_pid()").Scan(&pid2); err != nil {
		t.Fatal(err)
	}
	_ = tx.Rollback(ctxT(t))
	conn.Release()
	if txPID != pid1 || pid2 == pid1 {
		t.Fatalf("PgBouncer is not pooling by transaction (pids %d %d %d)", pid1, txPID, pid2)
	}

	leasetest.Run(t, leasetest.Config{
		ShortTTL: shortTTL,
		Open: func(t testing.TB) leasehold.Store {
			s, err := postgres.OpenURL(ctxT(t), u)
			if err != nil {
				t.Fatalf("OpenURL through PgBouncer: %v", err)
			}
			return s
		},
	})

	// And a batch renewal through it.
	s, err := postgres.OpenURL(ctxT(t), u)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	g, err := s.Acquire(ctxT(t), req("batch"))
	if err != nil {
		t.Fatal(err)
	}
	g.TTL = time.Minute
	res, err := s.RenewMany(ctxT(t), []leasehold.Grant{g})
	if err != nil || res[0].Err != nil {
		t.Fatalf("RenewMany through PgBouncer: %v, %+v", err, res)
	}
	if err := s.Release(ctxT(t), g); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Holder(ctxT(t), "batch"); !errors.Is(err, leasehold.ErrNotHeld) {
		t.Fatal(err)
	}
}
