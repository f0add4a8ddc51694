package postgres_test

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
	"go.uber.org/goleak"

	"github.com/leasehold-go/leasehold/internal/testserver"
	"github.com/leasehold-go/leasehold/postgres"
)

// srv is the throwaway cluster every test in this package shares.
var srv *testserver.Postgres

type mainRun struct{ m *testing.M }

// Run starts the server, runs the tests and stops the server, so that
// goleak checks for leaks after the server's own goroutines are gone.
func (r mainRun) Run() int {
	s, err := testserver.StartPostgres(context.Background(), testserver.PostgresOptions{})
	if err != nil {
		fmt.Fprintln(os.Stderr, "postgres tests need a real PostgreSQL server:", err)
		return 1
	}
	srv = s
	defer s.Stop()
	return r.m.Run()
}

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(mainRun{m})
}

func ctxT(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

var schemaSeq atomic.Int64

// freshSchema returns a schema name no other test uses, so that each test
// starts from an empty (or absent) set of objects.
func freshSchema(t testing.TB) string {
	return fmt.Sprintf("t%d_%d", time.Now().UnixNano()%1e9, schemaSeq.Add(1))
}

// newPool opens a pool on the test server, closed when t ends.
func newPool(t testing.TB, params ...string) *pgxpool.Pool {
	t.Helper()
	p, err := pgxpool.New(ctxT(t), srv.ConnString(params...))
	if err != nil {
		t.Fatalf("pgxpool.New: %v", err)
	}
	t.Cleanup(p.Close)
	return p
}

// newDB opens a database/sql pool with pgx's stdlib driver, closed when t
// ends.
func newDB(t testing.TB, params ...string) *sql.DB {
	t.Helper()
	cfg, err := pgxpool.ParseConfig(srv.ConnString(params...))
	if err != nil {
		t.Fatal(err)
	}
	db := stdlib.OpenDB(*cfg.ConnConfig)
	t.Cleanup(func() { _ = db.Close() })
	return db
}

// migrated returns a store on pool after running its migration.
func migrated(t testing.TB, pool *pgxpool.Pool, opts postgres.Options) postgres.Store {
	t.Helper()
	if err := postgres.Migrate(ctxT(t), pool, opts); err != nil {
		t.Fatalf("Migrate: %v", err)
	}
	s, err := postgres.New(pool, opts)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// newBouncerPool opens a pool through PgBouncer, closed when t ends.
func newBouncerPool(t testing.TB, b *testserver.Bouncer) *pgxpool.Pool {
	t.Helper()
	p, err := pgxpool.New(ctxT(t), b.ConnString())
	if err != nil {
		t.Fatalf("pgxpool.New: %v", err)
	}
	t.Cleanup(p.Close)
	return p
}
