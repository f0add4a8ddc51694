package bench

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"cirello.io/pglock"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
	"go.uber.org/goleak"

	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/postgres"
	"github.com/leasehold-go/leasehold/postgres/internal/pgtest"
)

// One server and one pool for every contender, so they are measured side by
// side on the same footing.
var (
	srv      *pgtest.Server
	pool     *pgxpool.Pool
	sqlDB    *sql.DB // pglock's database/sql pool (pgx stdlib driver)
	leaseS   *postgres.Store
	advS     *postgres.Store
	pglockC  *pglock.Client
	poolSize = 100
)

type mainRun struct{ m *testing.M }

func (r mainRun) Run() int {
	s, err := pgtest.Start()
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchmarks need a real PostgreSQL server:", err)
		return 1
	}
	srv = s
	defer s.Stop()
	if err := setup(); err != nil {
		fmt.Fprintln(os.Stderr, "setup:", err)
		return 1
	}
	defer teardown()
	code := r.m.Run()
	printSummary()
	return code
}

func TestMain(m *testing.M) { goleak.VerifyTestMain(mainRun{m}) }

func setup() error {
	ctx := context.Background()
	var err error
	pool, err = pgxpool.New(ctx, srv.ConnString(fmt.Sprintf("pool_max_conns=%d", poolSize)))
	if err != nil {
		return err
	}
	if err := postgres.Migrate(ctx, pool, postgres.Options{}); err != nil {
		return err
	}
	if leaseS, err = postgres.New(pool, postgres.Options{}); err != nil {
		return err
	}
	if advS, err = postgres.New(pool, postgres.Options{Mode: postgres.Advisory}); err != nil {
		return err
	}
	if _, err := pool.Exec(ctx, `CREATE TABLE raw_leases (key text PRIMARY KEY, owner text NOT NULL, expires_at timestamptz NOT NULL)`); err != nil {
		return err
	}
	cfg, err := pgx.ParseConfig(srv.ConnString())
	if err != nil {
		return err
	}
	sqlDB = stdlib.OpenDB(*cfg)
	sqlDB.SetMaxOpenConns(poolSize)
	sqlDB.SetMaxIdleConns(poolSize)
	// pglock insists on lib/pq in New; UnsafeNew takes pgx's stdlib driver,
	// which gives it the same driver and statement cache as the others.
	if pglockC, err = pglock.UnsafeNew(sqlDB, pglock.WithHeartbeatFrequency(0), pglock.WithLeaseDuration(30*time.Second)); err != nil {
		return err
	}
	return pglockC.TryCreateTable()
}

func teardown() {
	_ = leaseS.Close()
	_ = advS.Close()
	_ = sqlDB.Close()
	pool.Close()
}

// A worker makes acquire+release attempts on one key.
type worker interface {
	// attempt tries to acquire the key and, if it got it, releases it.
	attempt(ctx context.Context) (acquired bool, err error)
	close()
}

type contender struct {
	name      string
	newWorker func(ctx context.Context, key string) (worker, error)
}

var contenders = []contender{
	{"lease", storeWorker(func() *postgres.Store { return leaseS })},
	{"floor-upsert", newUpsertWorker},
	{"advisory", storeWorker(func() *postgres.Store { return advS })},
	{"floor-advisory", newAdvisoryWorker},
	{"pglock", newPglockWorker},
}

// ---- the store, either mode ----

type stWorker struct {
	s   *postgres.Store
	req leasehold.AcquireRequest
}

func storeWorker(s func() *postgres.Store) func(context.Context, string) (worker, error) {
	return func(_ context.Context, key string) (worker, error) {
		return &stWorker{s: s(), req: leasehold.AcquireRequest{Key: key, Owner: leasehold.NewOwnerID(), Label: "bench:1", TTL: 30 * time.Second}}, nil
	}
}

func (w *stWorker) attempt(ctx context.Context) (bool, error) {
	g, err := w.s.Acquire(ctx, w.req)
	if errors.Is(err, leasehold.ErrHeld) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return true, w.s.Release(ctx, g)
}

func (w *stWorker) close() {}

// ---- raw floor: bare upsert + delete ----

type upsertWorker struct{ key, owner string }

func newUpsertWorker(_ context.Context, key string) (worker, error) {
	return &upsertWorker{key: key, owner: leasehold.NewOwnerID()}, nil
}

const rawUpsert = `INSERT INTO raw_leases (key, owner, expires_at) VALUES ($1, $2, clock_timestamp() + interval '30 seconds')
ON CONFLICT (key) DO UPDATE SET owner = excluded.owner, expires_at = excluded.expires_at
WHERE raw_leases.expires_at <= clock_timestamp() RETURNING 1`

func (w *upsertWorker) attempt(ctx context.Context) (bool, error) {
	var one int
	err := pool.QueryRow(ctx, rawUpsert, w.key, w.owner).Scan(&one)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	_, err = pool.Exec(ctx, `DELETE FROM raw_leases WHERE key = $1 AND owner = $2`, w.key, w.owner)
	return true, err
}

func (w *upsertWorker) close() {}

// ---- raw floor: bare pg_try_advisory_lock + pg_advisory_unlock on one connection ----

type advisoryWorker struct {
	c  *pgxpool.Conn
	id int64
}

func newAdvisoryWorker(ctx context.Context, key string) (worker, error) {
	c, err := pool.Acquire(ctx)
	if err != nil {
		return nil, err
	}
	return &advisoryWorker{c: c, id: advS.LockID(key)}, nil
}

func (w *advisoryWorker) attempt(ctx context.Context) (bool, error) {
	var ok bool
	if err := w.c.QueryRow(ctx, `SELECT pg_try_advisory_lock($1)`, w.id).Scan(&ok); err != nil || !ok {
		return false, err
	}
	var unlocked bool
	if err := w.c.QueryRow(ctx, `SELECT pg_advisory_unlock($1)`, w.id).Scan(&unlocked); err != nil {
		return true, err
	}
	return true, nil
}

func (w *advisoryWorker) close() { w.c.Release() }

// ---- cirello.io/pglock ----

type pglockWorker struct{ key string }

func newPglockWorker(_ context.Context, key string) (worker, error) {
	return &pglockWorker{key: key}, nil
}

func (w *pglockWorker) attempt(ctx context.Context) (bool, error) {
	l, err := pglockC.AcquireContext(ctx, w.key, pglock.FailIfLocked())
	if errors.Is(err, pglock.ErrNotAcquired) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return true, pglockC.ReleaseContext(ctx, l)
}

func (w *pglockWorker) close() {}

// ---- the harness ----

type result struct {
	cycles, attempts float64 // per second
	p50, p99         time.Duration
}

var (
	resMu   sync.Mutex
	results = map[string][]result{} // by sub-benchmark name, final runs only
)

// BenchmarkAcquireRelease measures acquire+release cycles per second, and
// the latency of each attempt, for every contender: 1, 8 and 64 goroutines
// each on its own key, and 8 goroutines on one hot key (where an attempt
// that finds the key held counts as an attempt, not a cycle).
func BenchmarkAcquireRelease(b *testing.B) {
	for _, cfg := range []struct {
		name       string
		goroutines int
		hot        bool
	}{{"distinct-1", 1, false}, {"distinct-8", 8, false}, {"distinct-64", 64, false}, {"hot-8", 8, true}} {
		for _, c := range contenders {
			b.Run(cfg.name+"/"+c.name, func(b *testing.B) {
				cycles(b, c, cfg.goroutines, cfg.hot)
			})
		}
	}
}

func cycles(b *testing.B, c contender, goroutines int, hot bool) {
	ctx := context.Background()
	run := fmt.Sprintf("%d", time.Now().UnixNano())
	workers := make([]worker, goroutines)
	for i := range workers {
		key := fmt.Sprintf("bench/%s/%s/%d", c.name, run, i)
		if hot {
			key = fmt.Sprintf("bench/%s/%s/hot", c.name, run)
		}
		w, err := c.newWorker(ctx, key)
		if err != nil {
			b.Fatal(err)
		}
		workers[i] = w
	}
	defer func() {
		for _, w := range workers {
			w.close()
		}
	}()
	// Warm up: prepare statements on the connections, create the rows.
	for _, w := range workers {
		if _, err := w.attempt(ctx); err != nil {
			b.Fatal(err)
		}
	}
	lat := make([][]time.Duration, goroutines)
	var done, attempts atomic.Int64
	var failed atomic.Value
	var wg sync.WaitGroup
	b.ResetTimer()
	start := time.Now()
	for i, w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for done.Load() < int64(b.N) {
				t0 := time.Now()
				ok, err := w.attempt(ctx)
				lat[i] = append(lat[i], time.Since(t0))
				attempts.Add(1)
				if err != nil {
					failed.Store(err)
					return
				}
				if ok {
					done.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	if err, _ := failed.Load().(error); err != nil {
		b.Fatal(err)
	}
	var all []time.Duration
	for _, l := range lat {
		all = append(all, l...)
	}
	sort.Slice(all, func(i, j int) bool { return all[i] < all[j] })
	r := result{
		cycles:   float64(done.Load()) / elapsed.Seconds(),
		attempts: float64(attempts.Load()) / elapsed.Seconds(),
		p50:      all[len(all)/2],
		p99:      all[len(all)*99/100],
	}
	b.ReportMetric(r.cycles, "cycles/s")
	if hot {
		b.ReportMetric(r.attempts, "attempts/s")
	}
	b.ReportMetric(float64(r.p50.Microseconds()), "p50-µs")
	b.ReportMetric(float64(r.p99.Microseconds()), "p99-µs")
	if elapsed >= 300*time.Millisecond {
		resMu.Lock()
		results[b.Name()] = append(results[b.Name()], r)
		resMu.Unlock()
	}
}

// BenchmarkRenewMany10k renews 10,000 held lease-row leases in one
// statement per op (what a client holding 10,000 leases sends per renew
// period).
func BenchmarkRenewMany10k(b *testing.B) {
	gs := acquireMany(b, 10000)
	defer releaseMany(b, gs)
	ctx := context.Background()
	b.ResetTimer()
	start := time.Now()
	for i := 0; i < b.N; i++ {
		res, err := leaseS.RenewMany(ctx, gs)
		if err != nil {
			b.Fatal(err)
		}
		for _, r := range res {
			if r.Err != nil {
				b.Fatal(r.Err)
			}
		}
	}
	b.ReportMetric(float64(len(gs)*b.N)/time.Since(start).Seconds(), "leases/s")
}

// BenchmarkRenewEach10k renews the same 10,000 leases one statement each,
// from 8 goroutines, for comparison.
func BenchmarkRenewEach10k(b *testing.B) {
	gs := acquireMany(b, 10000)
	defer releaseMany(b, gs)
	ctx := context.Background()
	b.ResetTimer()
	start := time.Now()
	for i := 0; i < b.N; i++ {
		parallel(b, len(gs), func(i int) error {
			_, err := leaseS.Renew(ctx, gs[i])
			return err
		})
	}
	b.ReportMetric(float64(len(gs)*b.N)/time.Since(start).Seconds(), "leases/s")
}

func acquireMany(b *testing.B, n int) []leasehold.Grant {
	ctx := context.Background()
	gs := make([]leasehold.Grant, n)
	run := time.Now().UnixNano()
	parallel(b, n, func(i int) error {
		g, err := leaseS.Acquire(ctx, leasehold.AcquireRequest{Key: fmt.Sprintf("renew/%d/%d", run, i), Owner: leasehold.NewOwnerID(), Label: "bench", TTL: time.Minute})
		gs[i] = g
		return err
	})
	return gs
}

func releaseMany(b *testing.B, gs []leasehold.Grant) {
	ctx := context.Background()
	parallel(b, len(gs), func(i int) error { return leaseS.Release(ctx, gs[i]) })
}

// parallel runs fn(0..n-1) from 8 goroutines.
func parallel(b *testing.B, n int, fn func(i int) error) {
	var wg sync.WaitGroup
	var next atomic.Int64
	var failed atomic.Value
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				if err := fn(i); err != nil {
					failed.Store(err)
				}
			}
		}()
	}
	wg.Wait()
	if err, _ := failed.Load().(error); err != nil {
		b.Fatal(err)
	}
}

// printSummary prints, per configuration, each contender's median over the
// -count runs, and the ratios the store is judged by: the raw floor's
// throughput over the mode's (target at most 1.15) and the mode's over
// pglock's (target at least 2).
func printSummary() {
	resMu.Lock()
	defer resMu.Unlock()
	if len(results) == 0 {
		return
	}
	med := func(name string) (result, bool) {
		rs := results[name]
		if len(rs) == 0 {
			return result{}, false
		}
		pick := func(f func(r result) float64) float64 {
			v := make([]float64, len(rs))
			for i, r := range rs {
				v[i] = f(r)
			}
			sort.Float64s(v)
			return v[len(v)/2]
		}
		return result{
			cycles:   pick(func(r result) float64 { return r.cycles }),
			attempts: pick(func(r result) float64 { return r.attempts }),
			p50:      time.Duration(pick(func(r result) float64 { return float64(r.p50) })),
			p99:      time.Duration(pick(func(r result) float64 { return float64(r.p99) })),
		}, true
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "\nacquire+release, medians of %s runs (p50/p99 per attempt)\n", countRuns())
	fmt.Fprintf(&sb, "%-12s %-15s %10s %9s %9s   %s\n", "config", "contender", "cycles/s", "p50", "p99", "ratios")
	for _, cfg := range []string{"distinct-1", "distinct-8", "distinct-64", "hot-8"} {
		get := func(c string) (result, bool) { return med("BenchmarkAcquireRelease/" + cfg + "/" + c) }
		for _, c := range contenders {
			r, ok := get(c.name)
			if !ok {
				continue
			}
			note := ""
			floor := map[string]string{"lease": "floor-upsert", "advisory": "floor-advisory"}[c.name]
			if f, ok := get(floor); ok && floor != "" {
				note += fmt.Sprintf("floor/%s = %.2fx", c.name, f.cycles/r.cycles)
			}
			if p, ok := get("pglock"); ok && floor != "" {
				note += fmt.Sprintf(", %s/pglock = %.2fx", c.name, r.cycles/p.cycles)
			}
			fmt.Fprintf(&sb, "%-12s %-15s %10.0f %9s %9s   %s\n", cfg, c.name, r.cycles, r.p50.Round(time.Microsecond), r.p99.Round(time.Microsecond), note)
		}
	}
	fmt.Print(sb.String())
}

func countRuns() string {
	n := 0
	for _, rs := range results {
		n = max(n, len(rs))
	}
	return fmt.Sprint(n)
}
