package main

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/leasehold-go/leasehold/dedupe"
	"github.com/leasehold-go/leasehold/fence"
	"github.com/leasehold-go/leasehold/postgres"
)

// leaseTable is the leasehold lease table's name inside a run's schema.
const leaseTable = "leases"

// tables names the objects of one run, all in one schema, so that runs can
// share a server:
//
//	queue      the messages: one row per delivery unit (a duplicate is a second row)
//	effects    the work's effect: one row per msg_id, applied counts its applications,
//	           fence holds the highest lease token that wrote it (layer 1)
//	processed  the msg_ids done (layer 2, a dedupe.Table)
//	leases     leasehold's lease rows (layer 3, the postgres store)
type tables struct {
	schema string // the schema's name, validated
	q      string // quoted schema, for the SQL below
}

// newTables validates the schema name.
func newTables(schema string) (tables, error) {
	q, err := fence.Postgres.QuoteIdent(schema)
	if err != nil {
		return tables{}, fmt.Errorf("schema: %w", err)
	}
	return tables{schema: schema, q: q}, nil
}

func (t tables) queue() string   { return t.q + `."queue"` }
func (t tables) effects() string { return t.q + `."effects"` }

// effectFence is layer 1: the effects rows, fenced by the lease token.
func (t tables) effectFence() fence.Table {
	return fence.Table{Name: t.schema + ".effects", ID: "msg_id"}
}

// processed is layer 2: the record of the msg_ids done.
func (t tables) processed() dedupe.Table {
	return dedupe.Table{Name: t.schema + ".processed"}
}

// storeOptions is layer 3: the lease store's objects in the run's schema.
func (t tables) storeOptions() postgres.Options {
	return postgres.Options{Schema: t.schema, Table: leaseTable}
}

// migrate creates the run's schema and every table in it.
func (t tables) migrate(ctx context.Context, db *sql.DB) error {
	ddl := []string{
		`CREATE SCHEMA IF NOT EXISTS ` + t.q,
		`CREATE TABLE IF NOT EXISTS ` + t.queue() + ` (
			id         bigserial   PRIMARY KEY,
			msg_id     text        NOT NULL,
			payload    bigint      NOT NULL,
			work_ms    integer     NOT NULL, -- how long processing takes (the simulated work)
			visible_at timestamptz NOT NULL DEFAULT clock_timestamp(),
			delivered  integer     NOT NULL DEFAULT 0,
			acked      boolean     NOT NULL DEFAULT false)`,
		`CREATE INDEX IF NOT EXISTS queue_pending ON ` + t.queue() + ` (id) WHERE NOT acked`,
		`CREATE TABLE IF NOT EXISTS ` + t.effects() + ` (
			msg_id      text    PRIMARY KEY,
			applied     integer NOT NULL DEFAULT 0, -- the effect: must end at exactly 1
			total       bigint  NOT NULL DEFAULT 0, -- the payloads applied
			fence       bigint  NOT NULL DEFAULT 0, -- the highest lease token that wrote the row
			last_worker text    NOT NULL DEFAULT '')`,
	}
	for _, q := range ddl {
		if _, err := db.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("migrate: %w", err)
		}
	}
	if err := t.processed().Migrate(ctx, db); err != nil {
		return err
	}
	return postgres.MigrateDB(ctx, db, t.storeOptions())
}

// drop removes the run's schema and everything in it.
func (t tables) drop(ctx context.Context, db *sql.DB) error {
	_, err := db.ExecContext(ctx, `DROP SCHEMA IF EXISTS `+t.q+` CASCADE`)
	return err
}
