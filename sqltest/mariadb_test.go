package sqltest

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"testing"

	_ "github.com/go-sql-driver/mysql"

	"github.com/leasehold-go/leasehold/fence"
)

// mariaDSN is the shared test server's data source name.
// clientFoundRows makes an UPDATE report the rows it matched, as
// fence.Table needs.
func mariaDSN(t testing.TB) string {
	return mariaDBServer(t).DSN("clientFoundRows=true")
}

// openMariaDB opens the shared test server's database.
func openMariaDB(t testing.TB) *sql.DB {
	t.Helper()
	db, err := sql.Open("mysql", mariaDSN(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func TestMariaDB(t *testing.T) {
	runScenarios(t, openMariaDB(t), fence.MySQL, fenceScenarios)
}

func TestDedupeMariaDB(t *testing.T) {
	runScenarios(t, openMariaDB(t), fence.MySQL, dedupeScenarios)
}

// Without clientFoundRows, MySQL reports an UPDATE that left the fence at
// the same token as changing no row. The same holder writing again is then
// refused, with an error that says how to fix the DSN rather than calling
// the token stale.
func TestMariaDBWithoutClientFoundRows(t *testing.T) {
	dsn := strings.Replace(mariaDSN(t), "clientFoundRows=true", "clientFoundRows=false", 1)
	db, err := sql.Open("mysql", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	tbl := accountsTable(t, db, fence.MySQL)
	ctx := context.Background()
	if err := tbl.Check(ctx, db, int64(1), 5); err != nil {
		t.Fatal(err)
	}
	err = tbl.Check(ctx, db, int64(1), 5)
	if err == nil || errors.Is(err, fence.ErrStale) || !strings.Contains(err.Error(), "clientFoundRows=true") {
		t.Fatalf("the same token again without clientFoundRows: got %v, want an error naming clientFoundRows", err)
	}
	wantStale(t, tbl.Check(ctx, db, int64(1), 4), 4, 5)
}
