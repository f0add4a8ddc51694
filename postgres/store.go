package postgres

import (
	"context"
	"database/sql"
	"errors"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/leasehold-go/leasehold"
)

// Store is what the package's two stores have in common: [*LeaseStore]
// (lease rows) and [*AdvisoryStore] (advisory locks). New, NewDB and
// OpenURL return one or the other, as Options.Mode (or the URL's mode
// parameter) says; a type assertion reaches what only one of them has
// (LeaseStore.List, AdvisoryStore.LockID). Both are safe for concurrent use.
type Store interface {
	leasehold.Store
	leasehold.Notifier
	leasehold.BatchRenewer
	// Mode reports which of the two stores this is.
	Mode() Mode
	// Migrate runs the migration for the store's options on its pool
	// (see MigrationSQL).
	Migrate(ctx context.Context) error
}

// New returns the store that opts.Mode selects, on pool: a *LeaseStore
// (the default) or an *AdvisoryStore. The pool stays the caller's: Close
// does not close it. An AdvisoryStore keeps one of the pool's connections
// for every held lease, and the notifier keeps one more (hijacked out of
// the pool), so size pool_max_conns for them.
func New(pool *pgxpool.Pool, opts Options) (Store, error) {
	if pool == nil {
		return nil, errors.New("postgres: New: pool is nil")
	}
	return newStore(poolQuerier{pool}, opts, nil)
}

// NewDB returns the store that opts.Mode selects, on db: a database/sql
// pool opened with pgx's stdlib driver (sql.Open("pgx", ...) after importing
// github.com/jackc/pgx/v5/stdlib, or stdlib.OpenDBFromPool). The db stays
// the caller's. Other drivers work for the LeaseStore, but an AdvisoryStore
// then notices a broken session only when it renews, and Subscribe never
// fires.
func NewDB(db *sql.DB, opts Options) (Store, error) {
	if db == nil {
		return nil, errors.New("postgres: NewDB: db is nil")
	}
	return newStore(dbQuerier{db}, opts, nil)
}

// newStore makes the store of opts.Mode on q. ownPool, if not nil, is the
// pool behind q that the store's Close closes.
func newStore(q querier, opts Options, ownPool *pgxpool.Pool) (Store, error) {
	o, err := opts.resolved()
	if err != nil {
		return nil, err
	}
	if o.Mode == Advisory {
		return newAdvisoryStore(q, o, ownPool), nil
	}
	return newLeaseStore(q, o, ownPool), nil
}
