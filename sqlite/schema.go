package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	sqlite3 "modernc.org/sqlite/lib"
)

// applicationID marks a file as a leasehold store in the SQLite header
// (PRAGMA application_id): the bytes "LHLD".
const applicationID = 0x4c484c44

// schemaVersion is the schema this code writes and reads (PRAGMA
// user_version). A file with a higher version is refused.
const schemaVersion = 1

// schemaSQL is run in one transaction when the file is new. One row per key
// ever acquired: token is the last token minted for the key and is never
// lowered, and the row is never deleted, so the counter outlives release and
// expiry. owner is NULL when the lease was released. expires is Unix
// nanoseconds by the host's wall clock.
func schemaSQL() string {
	return fmt.Sprintf(`
CREATE TABLE IF NOT EXISTS leasehold_leases (
	key     TEXT PRIMARY KEY NOT NULL,
	token   INTEGER NOT NULL CHECK (token > 0),
	owner   TEXT,
	label   TEXT NOT NULL DEFAULT '',
	expires INTEGER NOT NULL DEFAULT 0
) WITHOUT ROWID, STRICT;
PRAGMA application_id = %d;
PRAGMA user_version = %d;
`, applicationID, schemaVersion)
}

// fileState is what Open finds in the file.
type fileState struct {
	appID, version int64
	objects        int64 // entries in sqlite_schema
	journal        string
}

// inspect reads the file's identity without writing anything.
func inspect(ctx context.Context, q interface {
	QueryRowContext(context.Context, string, ...any) *sql.Row
}) (fileState, error) {
	var st fileState
	if err := q.QueryRowContext(ctx, "PRAGMA application_id").Scan(&st.appID); err != nil {
		return st, err
	}
	if err := q.QueryRowContext(ctx, "PRAGMA user_version").Scan(&st.version); err != nil {
		return st, err
	}
	if err := q.QueryRowContext(ctx, "SELECT count(*) FROM sqlite_schema").Scan(&st.objects); err != nil {
		return st, err
	}
	if err := q.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&st.journal); err != nil {
		return st, err
	}
	return st, nil
}

// check reports whether the file is a leasehold store (ours), an empty
// database that can become one (fresh), or neither (an error).
func (s *Store) check(st fileState) (ours bool, err error) {
	switch {
	case st.appID == applicationID && st.version > schemaVersion:
		return false, fmt.Errorf("%w: %s has leasehold schema version %d, this build knows %d; upgrade leasehold",
			ErrForeignDatabase, s.path, st.version, schemaVersion)
	case st.appID == applicationID:
		return true, nil
	case st.appID == 0 && st.objects == 0 && st.version == 0:
		return false, nil
	default:
		return false, fmt.Errorf("%w: %s is a SQLite database of another application (application_id %#x, user_version %d, %d schema objects); refusing to modify it",
			ErrForeignDatabase, s.path, st.appID, st.version, st.objects)
	}
}

// setup checks the file's identity, switches it to WAL mode and creates the
// schema if the file is new. It is safe against other processes opening the
// same new file at the same time.
func (s *Store) setup(ctx context.Context) error {
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return s.explain(err)
	}
	defer conn.Close()
	var st fileState
	err = s.retry(ctx, func() error {
		// One read transaction: a consistent snapshot, even while another
		// process is creating the schema.
		tx, err := conn.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
		if err != nil {
			return err
		}
		defer tx.Rollback()
		st, err = inspect(ctx, tx)
		return err
	})
	if err != nil {
		return s.explain(err)
	}
	ours, err := s.check(st)
	if err != nil {
		return err
	}
	if st.journal != "wal" {
		// Persistent: every later connection, in any process, uses WAL.
		var mode string
		err = s.retry(ctx, func() error {
			return conn.QueryRowContext(ctx, "PRAGMA journal_mode = WAL").Scan(&mode)
		})
		if err != nil {
			return s.explain(fmt.Errorf("set WAL mode: %w", err))
		}
		if mode != "wal" {
			return fmt.Errorf("%s: cannot use WAL mode (journal mode stays %q); is the file on a local file system?", s.path, mode)
		}
	}
	if ours {
		return nil
	}
	// A new file: create the schema in one write transaction, checking again
	// under the write lock in case another process got there first.
	err = s.retry(ctx, func() error {
		tx, err := conn.BeginTx(ctx, nil) // BEGIN IMMEDIATE
		if err != nil {
			return err
		}
		defer tx.Rollback()
		st, err := inspect(ctx, tx)
		if err != nil {
			return err
		}
		ours, err := s.check(st)
		if err != nil {
			return err
		}
		if !ours {
			if _, err := tx.ExecContext(ctx, schemaSQL()); err != nil {
				return fmt.Errorf("create schema: %w", err)
			}
		}
		return tx.Commit()
	})
	return s.explain(err)
}

// explain adds the path and a plain reason to errors that mean the file is
// not a usable database.
func (s *Store) explain(err error) error {
	if err == nil || errors.Is(err, ErrForeignDatabase) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	switch sqliteCode(err) {
	case sqlite3.SQLITE_NOTADB, sqlite3.SQLITE_CORRUPT:
		return fmt.Errorf("%w: %s: %v", ErrNotDatabase, s.path, err)
	case sqlite3.SQLITE_READONLY, sqlite3.SQLITE_CANTOPEN, sqlite3.SQLITE_PERM:
		return fmt.Errorf("%s (and its -wal and -shm files) must be writable: %w", s.path, err)
	}
	return fmt.Errorf("%s: %w", s.path, err)
}

// stmts are the prepared statements of the hot paths.
type stmts struct {
	get, put, renew, release, holder, list *sql.Stmt
}

func (p *stmts) prepare(ctx context.Context, db *sql.DB) error {
	for _, x := range []struct {
		dst **sql.Stmt
		sql string
	}{
		{&p.get, `SELECT token, owner, label, expires FROM leasehold_leases WHERE key = ?1`},
		{&p.put, `INSERT INTO leasehold_leases (key, token, owner, label, expires) VALUES (?1, ?2, ?3, ?4, ?5)
			ON CONFLICT (key) DO UPDATE SET token = excluded.token, owner = excluded.owner,
				label = excluded.label, expires = excluded.expires`},
		{&p.renew, `UPDATE leasehold_leases SET expires = ?4 WHERE key = ?1 AND owner = ?2 AND token = ?3`},
		{&p.release, `UPDATE leasehold_leases SET owner = NULL, label = '', expires = 0 WHERE key = ?1 AND owner = ?2 AND token = ?3`},
		{&p.holder, `SELECT label, token, expires FROM leasehold_leases WHERE key = ?1 AND owner IS NOT NULL AND expires > ?2`},
		{&p.list, `SELECT key, label, token, expires FROM leasehold_leases WHERE key >= ?1 AND owner IS NOT NULL AND expires > ?2 ORDER BY key`},
	} {
		st, err := db.PrepareContext(ctx, x.sql)
		if err != nil {
			return err
		}
		*x.dst = st
	}
	return nil
}

func (p *stmts) close() {
	for _, st := range []*sql.Stmt{p.get, p.put, p.renew, p.release, p.holder, p.list} {
		if st != nil {
			st.Close()
		}
	}
}
