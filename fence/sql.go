package fence

import (
	"context"
	"database/sql"
	"errors"
)

// Execer runs a SQL statement. *sql.DB, *sql.Tx and *sql.Conn satisfy it;
// pass the *sql.Tx to fence a write made in the same transaction. For pgx
// without database/sql, wrap its Exec in an [ExecFunc].
type Execer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

// Querier reads one row. *sql.DB, *sql.Tx and *sql.Conn satisfy it. When the
// [Execer] given to a [Table] method is also a Querier, a statement that
// changed no row is followed by a read of the row's fence, to tell a stale
// token (*[StaleError] with Highest set) from a missing row ([ErrNoRow]).
type Querier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// ExecFunc adapts a function that runs a statement and returns the number of
// rows it affected to the [Execer] interface. It is the adapter for pgx
// (a pgx.Tx, *pgx.Conn or *pgxpool.Pool in exec):
//
//	ex := fence.ExecFunc(func(ctx context.Context, q string, args ...any) (int64, error) {
//		tag, err := exec.Exec(ctx, q, args...)
//		return tag.RowsAffected(), err
//	})
//
// An ExecFunc cannot read rows, so a statement that changed no row is
// reported as a *[StaleError] with Highest 0, which may also mean that the
// row does not exist. pgx users who want the distinction can use
// database/sql through pgx's stdlib package (stdlib.OpenDBFromPool).
type ExecFunc func(ctx context.Context, query string, args ...any) (rowsAffected int64, err error)

// ExecContext calls f and returns its row count as a [sql.Result].
func (f ExecFunc) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	n, err := f(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	return rowsAffected(n), nil
}

// rowsAffected is the sql.Result of an ExecFunc.
type rowsAffected int64

func (n rowsAffected) RowsAffected() (int64, error) { return int64(n), nil }

func (rowsAffected) LastInsertId() (int64, error) {
	return 0, errors.New("fence: LastInsertId is not supported by ExecFunc")
}
