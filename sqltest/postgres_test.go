package sqltest

import (
	"context"
	"database/sql"
	"errors"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/leasehold-go/leasehold/fence"
)

// TestPostgres runs the scenarios through database/sql with pgx's stdlib
// driver, using the zero Dialect ($1 placeholders).
func TestPostgres(t *testing.T) {
	runScenarios(t, openPostgres(t), fence.Dialect(0), fenceScenarios)
}

// openPostgres opens the test server through database/sql with pgx's
// stdlib driver.
func openPostgres(t testing.TB) *sql.DB {
	t.Helper()
	pool, err := pgxpool.New(context.Background(), postgresURL(t))
	if err != nil {
		t.Fatal(err)
	}
	db := stdlib.OpenDBFromPool(pool)
	t.Cleanup(func() {
		db.Close()
		pool.Close()
	})
	return db
}

// TestPgxExecFunc uses pgx without database/sql, through the documented
// ExecFunc adapter, on a pgx transaction.
func TestPgxExecFunc(t *testing.T) {
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, postgresURL(t))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	name := uniqueName("docs")
	if _, err := conn.Exec(ctx, `CREATE TABLE `+name+` (id TEXT PRIMARY KEY, body TEXT NOT NULL DEFAULT '', fence BIGINT NOT NULL DEFAULT 0)`); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, `INSERT INTO `+name+` (id) VALUES ('a')`); err != nil {
		t.Fatal(err)
	}
	tbl := fence.Table{Name: name}

	write := func(token uint64, body string) error {
		tx, err := conn.Begin(ctx)
		if err != nil {
			return err
		}
		defer tx.Rollback(ctx)
		ex := fence.ExecFunc(func(ctx context.Context, q string, args ...any) (int64, error) {
			tag, err := tx.Exec(ctx, q, args...)
			return tag.RowsAffected(), err
		})
		if err := tbl.Check(ctx, ex, "a", token); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `UPDATE `+name+` SET body = $1 WHERE id = $2`, body, "a"); err != nil {
			return err
		}
		return tx.Commit(ctx)
	}
	if err := write(5, "five"); err != nil {
		t.Fatal(err)
	}
	err = write(4, "four")
	var se *fence.StaleError
	if !errors.As(err, &se) || se.Token != 4 || se.Highest != 0 {
		t.Fatalf("stale write through ExecFunc: %v; want *StaleError with Highest 0 (unknown)", err)
	}
	var body string
	if err := conn.QueryRow(ctx, `SELECT body FROM `+name+` WHERE id = 'a'`).Scan(&body); err != nil || body != "five" {
		t.Fatalf("body %q, %v", body, err)
	}

	// The one-statement form through pgx.
	ex := fence.ExecFunc(func(ctx context.Context, q string, args ...any) (int64, error) {
		tag, err := conn.Exec(ctx, q, args...)
		return tag.RowsAffected(), err
	})
	if err := tbl.Update(ctx, ex, "a", 6, map[string]any{"body": "six"}); err != nil {
		t.Fatal(err)
	}
	if err := tbl.Update(ctx, ex, "a", 5, map[string]any{"body": "five again"}); !errors.Is(err, fence.ErrStale) {
		t.Fatalf("stale Update through pgx: %v", err)
	}
	// A driver error passes through, not as stale.
	bad := fence.Table{Name: "no_such_table"}
	if err := bad.Check(ctx, ex, "a", 1); err == nil || errors.Is(err, fence.ErrStale) {
		t.Fatalf("missing table: %v", err)
	}
}

var _ fence.Execer = (*sql.Tx)(nil)
var _ fence.Querier = (*sql.Conn)(nil)
