package postgres_test

import (
	"testing"
	"time"

	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/leasetest"
	"github.com/leasehold-go/leasehold/postgres"
)

// shortTTL is the suite's expiry TTL here: longer than its 300 ms default,
// because the machines these tests run on are shared and a renewal starved
// of CPU for 200 ms would fail a test that proves nothing about the store.
const shortTTL = time.Second

// conformance runs the leasehold suite on one configuration. open makes a
// store handle with opts; every handle reaches the same tables.
func conformance(t *testing.T, opts postgres.Options, open func(t testing.TB, opts postgres.Options) leasehold.Store) {
	opts.Schema = freshSchema(t)
	if err := postgres.Migrate(ctxT(t), newPool(t), opts); err != nil {
		t.Fatalf("Migrate: %v", err)
	}
	leasetest.Run(t, leasetest.Config{
		Open:     func(t testing.TB) leasehold.Store { return open(t, opts) },
		ShortTTL: shortTTL,
		Restart: func(t testing.TB) {
			if err := srv.Restart(ctxT(t)); err != nil {
				t.Fatalf("restart: %v", err)
			}
		},
	})
}

// openPool opens a store with its own pgxpool (closed by the store's Close).
func openPool(t testing.TB, opts postgres.Options) leasehold.Store {
	t.Helper()
	u := srv.ConnString("pool_max_conns=20", "schema="+opts.Schema, "mode="+opts.Mode.String())
	s, err := postgres.OpenURL(ctxT(t), u)
	if err != nil {
		t.Fatalf("OpenURL: %v", err)
	}
	return s
}

// openDB opens a store on a database/sql pool (pgx stdlib driver).
func openDB(t testing.TB, opts postgres.Options) leasehold.Store {
	t.Helper()
	s, err := postgres.NewDB(newDB(t), opts)
	if err != nil {
		t.Fatalf("NewDB: %v", err)
	}
	return s
}

func TestConformanceLeaseRowPool(t *testing.T) {
	conformance(t, postgres.Options{Mode: postgres.LeaseRow}, openPool)
}

func TestConformanceAdvisoryPool(t *testing.T) {
	conformance(t, postgres.Options{Mode: postgres.Advisory}, openPool)
}

func TestConformanceLeaseRowDB(t *testing.T) {
	conformance(t, postgres.Options{Mode: postgres.LeaseRow}, openDB)
}

func TestConformanceAdvisoryDB(t *testing.T) {
	conformance(t, postgres.Options{Mode: postgres.Advisory}, openDB)
}
