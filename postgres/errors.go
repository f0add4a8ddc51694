package postgres

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/leasehold-go/leasehold"
)

// Errors the store wraps in a *leasehold.StoreError. Check them with
// errors.Is.
var (
	// ErrNotMigrated: the store's table, sequence or schema does not
	// exist. Run the migration (Migrate, or `leasehold migrate --store
	// postgres://...`); the store never creates tables by itself.
	ErrNotMigrated = errors.New("postgres: leasehold tables missing; run the migration (postgres.Migrate or `leasehold migrate --store postgres://...`)")
	// ErrReadOnly: the server refused a write because the transaction is
	// read-only (a hot standby, or default_transaction_read_only=on).
	ErrReadOnly = errors.New("postgres: the database is read-only (a standby, or default_transaction_read_only is on); point the store at the primary")
	// ErrStatementTimeout: the server cancelled the statement
	// (statement_timeout or lock_timeout).
	ErrStatementTimeout = errors.New("postgres: statement timed out on the server")
	// ErrAuth: the server rejected the user or password.
	ErrAuth = errors.New("postgres: authentication failed (check the user and password)")
	// ErrUnreachable: the server could not be reached or the connection
	// broke.
	ErrUnreachable = errors.New("postgres: cannot reach the server")
	// ErrLockIDCollision: in advisory mode, two different keys hash to the
	// same 64-bit advisory lock id and the other key holds it. Use another
	// key (or Table, which salts the hash), or the lease-row mode.
	ErrLockIDCollision = errors.New("postgres: advisory lock id collision between two keys")
)

// PostgreSQL error codes the store explains.
const (
	codeUndefinedTable   = "42P01"
	codeUndefinedSchema  = "3F000"
	codeReadOnly         = "25006"
	codeQueryCanceled    = "57014"
	codeLockNotAvailable = "55P03"
	codeInvalidPassword  = "28P01"
	codeInvalidAuth      = "28000"
	codeUnknownDatabase  = "3D000"
	codeNoPrivilege      = "42501"
)

// fail turns err from operation op into the error the Store contract asks
// for: the caller's context error as is, otherwise a *leasehold.StoreError
// whose message says what is wrong.
func (c *core) fail(ctx context.Context, op string, err error) error {
	if ctxErr := ctx.Err(); ctxErr != nil {
		return ctxErr
	}
	return &leasehold.StoreError{Store: c.name, Op: op, Err: explain(err, c.tableName)}
}

// explain adds a sentinel and a hint to a pgx error.
func explain(err error, table string) error {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch pgErr.Code {
		case codeUndefinedTable, codeUndefinedSchema:
			return fmt.Errorf("%w: %s: %w", ErrNotMigrated, table, err)
		case codeReadOnly:
			return fmt.Errorf("%w: %w", ErrReadOnly, err)
		case codeQueryCanceled, codeLockNotAvailable:
			return fmt.Errorf("%w: %w", ErrStatementTimeout, err)
		case codeInvalidPassword, codeInvalidAuth:
			return fmt.Errorf("%w: %w", ErrAuth, err)
		case codeUnknownDatabase:
			return fmt.Errorf("postgres: the database does not exist: %w", err)
		case codeNoPrivilege:
			return fmt.Errorf("postgres: permission denied on %s (grant SELECT, INSERT, UPDATE on the tables and USAGE on the sequence): %w", table, err)
		}
		var connErr *pgconn.ConnectError
		if errors.As(err, &connErr) {
			return fmt.Errorf("postgres: the server refused the connection: %w", err)
		}
		if pgErr.Severity == "FATAL" || pgErr.Severity == "PANIC" {
			return fmt.Errorf("%w: the server ended the session: %w", ErrUnreachable, err)
		}
		return err
	}
	var connErr *pgconn.ConnectError
	if errors.As(err, &connErr) {
		return fmt.Errorf("%w: %w", ErrUnreachable, err)
	}
	var netErr net.Error
	if errors.As(err, &netErr) || pgconn.SafeToRetry(err) || isClosedConn(err) {
		return fmt.Errorf("%w: %w", ErrUnreachable, err)
	}
	return err
}

// isClosedConn reports whether err says the connection was already closed or
// broke mid-read.
func isClosedConn(err error) bool {
	msg := err.Error()
	for _, s := range []string{"conn closed", "unexpected EOF", "connection reset", "broken pipe", "bad connection", "connection is already closed"} {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}

// sessionBroken reports whether err leaves a session's connection unusable
// (anything but an ordinary, non-fatal server error).
func sessionBroken(err error) bool {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return pgErr.Severity == "FATAL" || pgErr.Severity == "PANIC"
	}
	return true
}

func isNoRows(err error) bool {
	return errors.Is(err, pgx.ErrNoRows) || errors.Is(err, sql.ErrNoRows)
}
