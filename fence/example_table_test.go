package fence_test

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/leasehold-go/leasehold/fence"
)

// printExec stands in for a database: it prints each statement.
var printExec = fence.ExecFunc(func(_ context.Context, query string, args ...any) (int64, error) {
	fmt.Println(query, args)
	return 1, nil
})

// Check records the token in the row's fence column if no higher token has
// written to the row. Pass a *sql.Tx and make the write in the same
// transaction; here a printing stand-in shows the statement for PostgreSQL
// (the zero Dialect) and SQLite.
func ExampleTable_Check() {
	ctx := context.Background()
	accounts := fence.Table{Name: "accounts"}
	if err := accounts.Check(ctx, printExec, 1001, 42); err != nil {
		fmt.Println(err)
	}
	accounts.Dialect = fence.SQLite
	if err := accounts.Check(ctx, printExec, 1001, 42); err != nil {
		fmt.Println(err)
	}
	// Output:
	// UPDATE "accounts" SET "fence" = $1 WHERE "id" = $2 AND "fence" <= $1 [42 1001]
	// UPDATE "accounts" SET "fence" = ? WHERE "id" = ? AND "fence" <= ? [42 1001 42]
}

// The pattern for a write that takes more than one statement: fence check,
// then write, in one transaction.
func ExampleTable_Check_transaction() {
	transfer := func(ctx context.Context, db *sql.DB, id int64, amount int64, token uint64) error {
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		defer tx.Rollback()
		// Locks the row until commit; fails with ErrStale if a newer
		// holder has written.
		if err := (fence.Table{Name: "accounts"}).Check(ctx, tx, id, token); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE accounts SET balance = balance + $1 WHERE id = $2`, amount, id); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO ledger (account, amount) VALUES ($1, $2)`, id, amount); err != nil {
			return err
		}
		return tx.Commit()
	}
	_ = transfer
}

// Update writes the caller's columns and the fence in one conditional
// statement.
func ExampleTable_Update() {
	docs := fence.Table{Name: "docs", Dialect: fence.SQLite}
	err := docs.Update(context.Background(), printExec, "readme", 42, map[string]any{
		"body":  "hello",
		"title": "README",
	})
	fmt.Println(err)
	// Output:
	// UPDATE "docs" SET "body" = ?, "title" = ?, "fence" = ? WHERE "id" = ? AND "fence" <= ? [hello README 42 readme 42]
	// <nil>
}
