package sqltest

import (
	"database/sql"
	"path/filepath"
	"testing"

	_ "modernc.org/sqlite"

	"github.com/leasehold-go/leasehold/fence"
)

// openSQLite opens a fresh SQLite file that waits for its write lock
// instead of failing with SQLITE_BUSY.
func openSQLite(t testing.TB) *sql.DB {
	t.Helper()
	path := filepath.Join(t.TempDir(), "fence.db")
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(20000)&_pragma=journal_mode(WAL)")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func TestSQLite(t *testing.T) {
	runScenarios(t, openSQLite(t), fence.SQLite, fenceScenarios)
}
