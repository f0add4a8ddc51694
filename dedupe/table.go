package dedupe

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/leasehold-go/leasehold/fence"
)

// Table keeps a Record in a SQL table, one row per item done:
//
//	CREATE TABLE IF NOT EXISTS processed (
//		id VARCHAR(255) NOT NULL PRIMARY KEY, -- VARBINARY(255) in MySQL
//		done_at BIGINT NOT NULL               -- Unix milliseconds, for Prune
//	)
//
// Its methods take the connection to use on each call, so that an item can
// be marked in the same transaction as the work's own writes: pass the
// *sql.Tx to [Table.Mark], and roll back when it reports the item was
// already marked. [Table.Record] binds a Table to a database for use as a
// [Record] (each call its own statement).
//
// Racing transactions that mark the same id:
//
//   - PostgreSQL, READ COMMITTED (the default): the second waits for the
//     first to commit or roll back, then sees its outcome, so the work's
//     effect happens once. Under REPEATABLE READ or SERIALIZABLE the second
//     fails with a serialization error instead (SQLSTATE 40001): retry it.
//   - SQLite: one writer at a time. Open the database with a busy_timeout,
//     and make Mark the transaction's first statement (or begin it
//     IMMEDIATE): a deferred transaction that read first cannot be retried
//     by the busy timeout (SQLITE_BUSY_SNAPSHOT in WAL mode).
//   - MySQL and MariaDB: the id column is VARBINARY, so ids compare byte
//     for byte (a VARCHAR's default collation ignores case and accents,
//     which would make different ids duplicates). Racing inserts where one
//     rolls back can end in a deadlock error (1213): retry. The tests run
//     these statements on a real MariaDB server (Debian 12's 10.11), not
//     on Oracle MySQL.
//
// The zero value of each field is its default; only Name is required. The
// names are validated and quoted as in [fence.Table].
type Table struct {
	Name    string        // table name, optionally schema-qualified
	ID      string        // id column; "" means "id"
	DoneAt  string        // column of the time marked, in Unix milliseconds; "" means "done_at"
	Dialect fence.Dialect // placeholder and quoting style; the zero value is PostgreSQL
}

// DB runs statements and reads rows: *sql.DB, *sql.Conn and *sql.Tx satisfy it.
type DB interface {
	fence.Execer
	fence.Querier
}

// names holds a Table's quoted names.
type names struct{ table, id, doneAt string }

func (t Table) names() (names, error) {
	var n names
	var err error
	d := t.Dialect
	if _, err := d.QuoteIdent("x"); err != nil && !errors.Is(err, fence.ErrInvalidIdentifier) {
		return n, fmt.Errorf("dedupe: %w", err) // an unknown dialect
	}
	if t.Name == "" {
		return n, fmt.Errorf("dedupe: Table.Name is empty: %w", fence.ErrInvalidIdentifier)
	}
	if n.table, err = d.QuoteTable(t.Name); err != nil {
		return n, fmt.Errorf("dedupe: table: %w", err)
	}
	if n.id, err = d.QuoteIdent(cmp.Or(t.ID, "id")); err != nil {
		return n, fmt.Errorf("dedupe: id column: %w", err)
	}
	if n.doneAt, err = d.QuoteIdent(cmp.Or(t.DoneAt, "done_at")); err != nil {
		return n, fmt.Errorf("dedupe: done_at column: %w", err)
	}
	if n.id == n.doneAt {
		return n, fmt.Errorf("dedupe: the id and done_at columns are both %s: %w", n.id, fence.ErrInvalidIdentifier)
	}
	return n, nil
}

// CreateSQL returns the CREATE TABLE IF NOT EXISTS statement for the table.
func (t Table) CreateSQL() (string, error) {
	n, err := t.names()
	if err != nil {
		return "", err
	}
	idType := "VARCHAR"
	if t.Dialect == fence.MySQL {
		idType = "VARBINARY" // byte-wise comparison; a VARCHAR's collation folds case
	}
	return fmt.Sprintf("CREATE TABLE IF NOT EXISTS %s (%s %s(%d) NOT NULL PRIMARY KEY, %s BIGINT NOT NULL)",
		n.table, n.id, idType, MaxIDLen, n.doneAt), nil
}

// Migrate creates the table if it does not exist.
func (t Table) Migrate(ctx context.Context, exec fence.Execer) error {
	q, err := t.CreateSQL()
	if err != nil {
		return err
	}
	if _, err := exec.ExecContext(ctx, q); err != nil {
		return fmt.Errorf("dedupe: creating table %s: %w", t.Name, err)
	}
	return nil
}

// markSQL returns the insert-if-absent statement, which affects one row
// when the id is new and none when it is already there.
func (t Table) markSQL() (string, error) {
	n, err := t.names()
	if err != nil {
		return "", err
	}
	d := t.Dialect
	switch d {
	case fence.MySQL:
		// INSERT IGNORE reports 0 rows for a duplicate key even with the
		// client-found-rows flag, unlike ON DUPLICATE KEY UPDATE.
		return fmt.Sprintf("INSERT IGNORE INTO %s (%s, %s) VALUES (?, ?)", n.table, n.id, n.doneAt), nil
	default:
		return fmt.Sprintf("INSERT INTO %s (%s, %s) VALUES (%s, %s) ON CONFLICT (%s) DO NOTHING",
			n.table, n.id, n.doneAt, d.Placeholder(1), d.Placeholder(2), n.id), nil
	}
}

// Mark records id as done and reports whether this call was the first to.
// Pass the *sql.Tx of the work's own writes to mark them done together.
func (t Table) Mark(ctx context.Context, exec fence.Execer, id string) (bool, error) {
	if err := ValidateID(id); err != nil {
		return false, err
	}
	q, err := t.markSQL()
	if err != nil {
		return false, err
	}
	res, err := exec.ExecContext(ctx, q, id, time.Now().UnixMilli())
	if err != nil {
		return false, fmt.Errorf("dedupe: marking %q done in %s: %w", id, t.Name, err)
	}
	rows, err := res.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("dedupe: marking %q done in %s: %w", id, t.Name, err)
	}
	return rows > 0, nil
}

// Seen reports whether id is marked done.
func (t Table) Seen(ctx context.Context, q fence.Querier, id string) (bool, error) {
	if err := ValidateID(id); err != nil {
		return false, err
	}
	n, err := t.names()
	if err != nil {
		return false, err
	}
	query := fmt.Sprintf("SELECT 1 FROM %s WHERE %s = %s", n.table, n.id, t.Dialect.Placeholder(1))
	var one int
	switch err := q.QueryRowContext(ctx, query, id).Scan(&one); {
	case errors.Is(err, sql.ErrNoRows):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("dedupe: looking up %q in %s: %w", id, t.Name, err)
	}
	return true, nil
}

// Prune deletes the ids marked before the given time and returns how many
// it deleted. Prune only past the longest time an item can be redelivered:
// a pruned id counts as not done.
func (t Table) Prune(ctx context.Context, exec fence.Execer, before time.Time) (int64, error) {
	n, err := t.names()
	if err != nil {
		return 0, err
	}
	q := fmt.Sprintf("DELETE FROM %s WHERE %s < %s", n.table, n.doneAt, t.Dialect.Placeholder(1))
	res, err := exec.ExecContext(ctx, q, before.UnixMilli())
	if err == nil {
		var n int64
		if n, err = res.RowsAffected(); err == nil {
			return n, nil
		}
	}
	return 0, fmt.Errorf("dedupe: pruning %s: %w", t.Name, err)
}

// Record binds the table to db as a Record.
func (t Table) Record(db DB) Record { return tableRecord{t, db} }

type tableRecord struct {
	t  Table
	db DB
}

func (r tableRecord) Seen(ctx context.Context, id string) (bool, error) {
	return r.t.Seen(ctx, r.db, id)
}

func (r tableRecord) Mark(ctx context.Context, id string) (bool, error) {
	return r.t.Mark(ctx, r.db, id)
}
