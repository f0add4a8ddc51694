package sqltest

import (
	"context"
	"database/sql"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/leasehold-go/leasehold/fence"
)

// benchCheck compares a plain UPDATE of the row with Table.Check (the same
// UPDATE plus the fence condition and bookkeeping).
func benchCheck(b *testing.B, db *sql.DB, d fence.Dialect) {
	ctx := context.Background()
	name := uniqueName("bench")
	if _, err := db.Exec(`CREATE TABLE ` + name + ` (id BIGINT PRIMARY KEY, n BIGINT NOT NULL DEFAULT 0, fence BIGINT NOT NULL DEFAULT 0)`); err != nil {
		b.Fatal(err)
	}
	if _, err := db.Exec(`INSERT INTO ` + name + ` (id) VALUES (1)`); err != nil {
		b.Fatal(err)
	}
	tbl := fence.Table{Name: name, Dialect: d}
	b.Run("plain-update", func(b *testing.B) {
		q := rebind(d, `UPDATE `+name+` SET n = n + 1 WHERE id = ?`)
		for b.Loop() {
			if _, err := db.ExecContext(ctx, q, int64(1)); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("check", func(b *testing.B) {
		var tok uint64
		for b.Loop() {
			tok++
			if err := tbl.Check(ctx, db, int64(1), tok); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func BenchmarkSQLiteCheck(b *testing.B) {
	benchCheck(b, openSQLite(b), fence.SQLite)
}

func BenchmarkPostgresCheck(b *testing.B) {
	pool, err := pgxpool.New(context.Background(), postgresURL(b))
	if err != nil {
		b.Fatal(err)
	}
	defer pool.Close()
	db := stdlib.OpenDBFromPool(pool)
	defer db.Close()
	benchCheck(b, db, fence.Postgres)
}
