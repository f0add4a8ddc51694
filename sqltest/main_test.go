package sqltest

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"go.uber.org/goleak"

	"github.com/leasehold-go/leasehold/fence"
	"github.com/leasehold-go/leasehold/internal/testserver"
)

// The PostgreSQL server is started by the first test that needs it and
// stopped after all tests.
var (
	pgOnce   sync.Once
	pgServer *testserver.Postgres
	pgErr    error
)

func postgresURL(t testing.TB) string {
	t.Helper()
	pgOnce.Do(func() {
		pgServer, pgErr = testserver.StartPostgres(context.Background(), testserver.PostgresOptions{})
	})
	if pgErr != nil {
		t.Fatal(pgErr)
	}
	return pgServer.ConnString()
}

// The MariaDB server likewise.
var (
	myOnce   sync.Once
	myServer *testserver.MariaDB
	myErr    error
)

func mariaDBServer(t testing.TB) *testserver.MariaDB {
	t.Helper()
	myOnce.Do(func() {
		myServer, myErr = testserver.StartMariaDB(context.Background(), testserver.MariaDBOptions{Database: "leasehold_test"})
	})
	if myErr != nil {
		t.Fatal(myErr)
	}
	return myServer
}

func TestMain(m *testing.M) {
	code := m.Run()
	if pgServer != nil {
		pgServer.Stop()
	}
	if myServer != nil {
		myServer.Stop()
	}
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			code = 1
		}
	}
	os.Exit(code)
}

// rebind turns ? placeholders into $1, $2, ... for PostgreSQL.
func rebind(d fence.Dialect, q string) string {
	if d != fence.Postgres {
		return q
	}
	var b strings.Builder
	n := 0
	for _, r := range q {
		if r == '?' {
			n++
			b.WriteString("$" + strconv.Itoa(n))
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

var tableSeq atomic.Int64

// uniqueName returns a fresh table name, so that tests can share a
// database.
func uniqueName(base string) string {
	return fmt.Sprintf("%s_%d", base, tableSeq.Add(1))
}
