package bench

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/leasehold-go/leasehold/internal/testserver"
	"github.com/leasehold-go/leasehold/postgres"
)

// BenchmarkStatementTime measures, with pg_stat_statements on a server of
// its own, the server's execution time per statement of each mode's cycle
// and of its raw floor, one goroutine, stmtCycles cycles each: what the
// server spends, apart from the client and the scheduling between them. It
// prints one line per statement (mean µs, calls) and the cycle's sum per
// contender. It runs once whatever -benchtime asks.
func BenchmarkStatementTime(b *testing.B) {
	ctx := context.Background()
	s, err := testserver.StartPostgres(ctx, testserver.PostgresOptions{Args: []string{"-c", "shared_preload_libraries=pg_stat_statements", "-c", "pg_stat_statements.track_planning=on"}})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Stop()
	p, err := pgxpool.New(ctx, s.ConnString())
	if err != nil {
		b.Fatal(err)
	}
	defer p.Close()
	if _, err := p.Exec(ctx, `CREATE EXTENSION pg_stat_statements`); err != nil {
		b.Fatal(err)
	}
	if err := postgres.Migrate(ctx, p, postgres.Options{}); err != nil {
		b.Fatal(err)
	}
	if _, err := p.Exec(ctx, `CREATE TABLE raw_leases (key text PRIMARY KEY, owner text NOT NULL, expires_at timestamptz NOT NULL)`); err != nil {
		b.Fatal(err)
	}
	ls, err := postgres.New(p, postgres.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer ls.Close()
	as, err := postgres.New(p, postgres.Options{Mode: postgres.Advisory})
	if err != nil {
		b.Fatal(err)
	}
	defer as.Close()
	// The contenders' workers, on this server's pool.
	old := pool
	pool = p
	defer func() { pool = old }()
	cs := []contender{
		{"lease", storeWorker(func() postgres.Store { return ls })},
		contenders[1],
		{"advisory", storeWorker(func() postgres.Store { return as })},
		contenders[3],
	}
	for _, c := range cs {
		w, err := c.newWorker(ctx, "stmt/"+c.name)
		if err != nil {
			b.Fatal(err)
		}
		for range 100 { // warm up: prepare, leave the custom plans
			if _, err := w.attempt(ctx); err != nil {
				b.Fatal(err)
			}
		}
		if _, err := p.Exec(ctx, `SELECT pg_stat_statements_reset()`); err != nil {
			b.Fatal(err)
		}
		for range stmtCycles {
			if ok, err := w.attempt(ctx); err != nil || !ok {
				b.Fatal(c.name, ok, err)
			}
		}
		w.close()
		rows, err := p.Query(ctx, `SELECT query, calls, mean_exec_time * 1000, mean_plan_time * 1000 FROM pg_stat_statements
WHERE calls >= $1 ORDER BY query`, int64(stmtCycles))
		if err != nil {
			b.Fatal(err)
		}
		var sum float64
		for rows.Next() {
			var (
				q         string
				calls     int64
				exec, pln float64
			)
			if err := rows.Scan(&q, &calls, &exec, &pln); err != nil {
				b.Fatal(err)
			}
			sum += exec + pln
			q = strings.Join(strings.Fields(q), " ")
			fmt.Printf("%-14s %7.1f µs exec %5.1f µs plan  x%d  %.70s\n", c.name, exec, pln, calls, q)
		}
		if err := rows.Err(); err != nil {
			b.Fatal(err)
		}
		fmt.Printf("%-14s %7.1f µs per cycle in the server\n", c.name, sum)
	}
}

const stmtCycles = 5000
