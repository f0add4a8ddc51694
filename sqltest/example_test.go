package sqltest_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	_ "modernc.org/sqlite"

	"github.com/leasehold-go/leasehold/fence"
)

// The pattern for a fenced write of several statements, on a real SQLite
// file: fence check, then write, in one transaction. A holder fenced out by
// a newer token writes nothing.
func Example_checkThenWrite() {
	dir, _ := os.MkdirTemp("", "fence-example-")
	defer os.RemoveAll(dir)
	db, err := sql.Open("sqlite", filepath.Join(dir, "bank.db"))
	if err != nil {
		panic(err)
	}
	defer db.Close()
	ctx := context.Background()
	db.Exec(`CREATE TABLE accounts (id INTEGER PRIMARY KEY, balance BIGINT NOT NULL, fence BIGINT NOT NULL DEFAULT 0)`)
	db.Exec(`CREATE TABLE ledger (account INTEGER, amount BIGINT, token BIGINT)`)
	db.Exec(`INSERT INTO accounts (id, balance) VALUES (1, 100)`)
	accounts := fence.Table{Name: "accounts", Dialect: fence.SQLite}

	deposit := func(token uint64, amount int64) error {
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		defer tx.Rollback()
		if err := accounts.Check(ctx, tx, 1, token); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE accounts SET balance = balance + ? WHERE id = 1`, amount); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO ledger VALUES (1, ?, ?)`, amount, token); err != nil {
			return err
		}
		return tx.Commit()
	}

	fmt.Println(deposit(7, 10)) // the holder of token 7
	fmt.Println(deposit(8, 20)) // a newer holder took over
	err = deposit(7, 10)        // the old holder wakes up from a pause
	fmt.Println(errors.Is(err, fence.ErrStale), err)

	var balance, entries int64
	db.QueryRow(`SELECT balance, (SELECT count(*) FROM ledger) FROM accounts WHERE id = 1`).Scan(&balance, &entries)
	fmt.Println("balance", balance, "ledger entries", entries)
	// Output:
	// <nil>
	// <nil>
	// true fence: stale fencing token 7 for accounts id=1: a newer holder wrote with token 8
	// balance 130 ledger entries 2
}

// The one-statement form: the caller's columns and the fence in one
// conditional UPDATE.
func Example_oneStatement() {
	dir, _ := os.MkdirTemp("", "fence-example-")
	defer os.RemoveAll(dir)
	db, err := sql.Open("sqlite", filepath.Join(dir, "docs.db"))
	if err != nil {
		panic(err)
	}
	defer db.Close()
	ctx := context.Background()
	db.Exec(`CREATE TABLE docs (id TEXT PRIMARY KEY, body TEXT NOT NULL DEFAULT '', fence BIGINT NOT NULL DEFAULT 0)`)
	db.Exec(`INSERT INTO docs (id) VALUES ('readme')`)
	docs := fence.Table{Name: "docs", Dialect: fence.SQLite}

	fmt.Println(docs.Update(ctx, db, "readme", 3, map[string]any{"body": "v3"}))
	fmt.Println(docs.Update(ctx, db, "readme", 2, map[string]any{"body": "v2"}))
	fmt.Println(docs.Update(ctx, db, "changelog", 3, map[string]any{"body": "v3"}))

	var body string
	db.QueryRow(`SELECT body FROM docs WHERE id = 'readme'`).Scan(&body)
	fmt.Println("body:", body)
	// Output:
	// <nil>
	// fence: stale fencing token 2 for docs id=readme: a newer holder wrote with token 3
	// fence: no such row: docs id=changelog
	// body: v3
}
