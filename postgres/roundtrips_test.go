package postgres_test

import (
	"context"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/leasehold-go/leasehold/postgres"
)

// queryCounter is a pgx tracer that counts the statements sent on every
// connection of a pool (each is one round trip once its connection has
// prepared it) and the statements prepared.
type queryCounter struct {
	mu                sync.Mutex
	queries, prepares int
	sqls              []string
}

func (q *queryCounter) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	q.mu.Lock()
	q.queries++
	q.sqls = append(q.sqls, d.SQL)
	q.mu.Unlock()
	return ctx
}

func (q *queryCounter) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

func (q *queryCounter) TracePrepareStart(ctx context.Context, _ *pgx.Conn, _ pgx.TracePrepareStartData) context.Context {
	q.mu.Lock()
	q.prepares++
	q.mu.Unlock()
	return ctx
}

func (q *queryCounter) TracePrepareEnd(context.Context, *pgx.Conn, pgx.TracePrepareEndData) {}

// take returns the counts since the last take and resets them.
func (q *queryCounter) take() (queries, prepares int, sqls []string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	queries, prepares, sqls = q.queries, q.prepares, q.sqls
	q.queries, q.prepares, q.sqls = 0, 0, nil
	return
}

// TestStatementsPerOperation counts, through a pgx tracer, the statements
// each operation sends once its connection is warm: one per acquire, renew
// and release in either mode, none for bookkeeping, and nothing prepared
// again.
func TestStatementsPerOperation(t *testing.T) {
	for _, mode := range []postgres.Mode{postgres.LeaseRow, postgres.Advisory} {
		t.Run(mode.String(), func(t *testing.T) {
			cfg, err := pgxpool.ParseConfig(srv.ConnString())
			if err != nil {
				t.Fatal(err)
			}
			cfg.MaxConns = 4
			qc := &queryCounter{}
			cfg.ConnConfig.Tracer = qc
			pool, err := pgxpool.NewWithConfig(ctxT(t), cfg)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(pool.Close)
			s := migrated(t, pool, postgres.Options{Schema: freshSchema(t), Mode: mode})
			t.Cleanup(func() { _ = s.Close() })
			// Warm-up cycles: connections open and prepare the statements.
			for i := 0; i < 3; i++ {
				g, err := s.Acquire(ctxT(t), req("k"))
				if err != nil {
					t.Fatal(err)
				}
				if _, err := s.Renew(ctxT(t), g); err != nil {
					t.Fatal(err)
				}
				if err := s.Release(ctxT(t), g); err != nil {
					t.Fatal(err)
				}
			}
			qc.take()
			g, err := s.Acquire(ctxT(t), req("k"))
			if err != nil {
				t.Fatal(err)
			}
			check(t, qc, "acquire")
			if g, err = s.Renew(ctxT(t), g); err != nil {
				t.Fatal(err)
			}
			check(t, qc, "renew")
			if err := s.Release(ctxT(t), g); err != nil {
				t.Fatal(err)
			}
			check(t, qc, "release")
		})
	}
}

func check(t *testing.T, qc *queryCounter, op string) {
	t.Helper()
	n, p, sqls := qc.take()
	if n != 1 || p != 0 {
		t.Errorf("%s sent %d statements and prepared %d; want 1 and 0: %q", op, n, p, sqls)
	}
}
