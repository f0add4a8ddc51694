package postgres

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/leasehold-go/leasehold"
)

// migrationLockID serialises concurrent migrations (pg_advisory_xact_lock).
const migrationLockID = 0x6c65617365686f6c // "leasehol"

// MigrationSQL returns the DDL that Migrate runs for opts: idempotent
// (IF NOT EXISTS), in one transaction, serialised by a transaction-level
// advisory lock. For the default options it is:
//
//	SELECT pg_advisory_xact_lock(7810756276994469740);
//	CREATE TABLE IF NOT EXISTS "public"."leasehold_leases" (
//	    key        text        PRIMARY KEY,
//	    owner      text,                    -- NULL when free
//	    label      text        NOT NULL DEFAULT '',
//	    token      bigint      NOT NULL,    -- the last token minted for key
//	    expires_at timestamptz              -- NULL when free
//	);
//	CREATE SEQUENCE IF NOT EXISTS "public"."leasehold_leases_token_seq" AS bigint;
//
// The lease table serves the lease-row mode, the sequence the advisory mode.
// Rows of the lease table are never deleted (the token counter lives in
// them); a free row is a few dozen bytes. Migrate also creates the schema
// when it does not exist.
func MigrationSQL(opts Options) (string, error) {
	o, err := opts.resolved()
	if err != nil {
		return "", err
	}
	return migrationSQL(objectNames(o), false), nil
}

func migrationSQL(n names, createSchema bool) string {
	s := fmt.Sprintf("SELECT pg_advisory_xact_lock(%d);\n", int64(migrationLockID))
	if createSchema {
		s += "CREATE SCHEMA IF NOT EXISTS " + n.schema + ";\n"
	}
	s += `CREATE TABLE IF NOT EXISTS ` + n.table + ` (
    key        text        PRIMARY KEY,
    owner      text,
    label      text        NOT NULL DEFAULT '',
    token      bigint      NOT NULL,
    expires_at timestamptz
);
CREATE SEQUENCE IF NOT EXISTS ` + n.seq + ` AS bigint;
`
	return s
}

// Migrate creates the store's schema objects on pool if they do not exist
// (see MigrationSQL). It is idempotent and safe to run concurrently. The
// store never creates them by itself: until Migrate has run, every operation
// fails with an error that wraps ErrNotMigrated.
func Migrate(ctx context.Context, pool *pgxpool.Pool, opts Options) error {
	return migrate(ctx, poolQuerier{pool}, opts)
}

// MigrateDB is Migrate for a database/sql *sql.DB opened with pgx's stdlib
// driver.
func MigrateDB(ctx context.Context, db *sql.DB, opts Options) error {
	return migrate(ctx, dbQuerier{db}, opts)
}

// MigrateURL opens rawURL as OpenURL does (its mode, schema and table
// parameters select the objects), runs Migrate, and closes the connection.
// It is what `leasehold migrate --store postgres://...` runs.
func MigrateURL(ctx context.Context, rawURL string) error {
	s, err := OpenURL(ctx, rawURL)
	if err != nil {
		return err
	}
	defer s.Close()
	return s.Migrate(ctx)
}

func migrate(ctx context.Context, q querier, opts Options) error {
	o, err := opts.resolved()
	if err != nil {
		return err
	}
	n := objectNames(o)
	var exists bool
	if err := q.queryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_catalog.pg_namespace WHERE nspname = $1::text)`, o.Schema).Scan(&exists); err != nil {
		return migrateErr(ctx, n, err)
	}
	// One simple-protocol query string runs as one implicit transaction:
	// all of it or none of it.
	if _, err := q.exec(ctx, migrationSQL(n, !exists)); err != nil {
		return migrateErr(ctx, n, err)
	}
	return nil
}

func migrateErr(ctx context.Context, n names, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return &leasehold.StoreError{Store: "postgres", Op: "migrate", Err: explain(err, n.table)}
}
