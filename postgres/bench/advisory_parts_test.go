package bench

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/leasehold-go/leasehold/postgres"
)

const seqLit = `'public.leasehold_leases_token_seq'`

var acqFull = `SELECT l.ok,
  current_setting('application_name'), current_setting('idle_session_timeout'),
  CASE WHEN l.ok THEN nextval(` + seqLit + `::regclass) ELSE 0 END,
  CASE WHEN l.ok THEN set_config('application_name', left('lh1 ' || $2::text || ' ' || currval(` + seqLit + `::regclass) || ' ' || ((date_part('epoch', clock_timestamp()) * 1000)::bigint + $4::bigint) || ' ' || $3::text, 63), false) END IS NOT NULL,
  CASE WHEN l.ok THEN set_config('idle_session_timeout', $4::bigint::text, false) END IS NOT NULL
FROM (SELECT pg_try_advisory_lock($1::bigint) AS ok OFFSET 0) l`

const relFull = `SELECT pg_advisory_unlock($1::bigint),
  set_config('application_name', $2::text, false) IS NOT NULL,
  set_config('idle_session_timeout', $3::text, false) IS NOT NULL,
  CASE WHEN pg_try_advisory_xact_lock($4::int4, $5::int4) THEN false
  ELSE pg_notify($6::text, $7::text) IS NOT NULL END`

type part struct {
	name     string
	acq, rel string
	acqArgs  func(id int64) []any
	relArgs  func(id int64) []any
}

// BenchmarkAdvisoryParts takes the advisory mode's two statements apart on
// one held connection, without the store's Go code: the raw floor, the
// statements as the store sends them ("full"), variants with one part
// removed, and the lock plus token with one part added; "store" is the
// store itself. It prints per variant the wall time, the server's CPU and
// the client's CPU per cycle (the sums over all PostgreSQL processes and the
// test process), interleaved in 16 rounds of 2000 cycles. Set
// LEASEHOLD_PARTS to a comma-separated list of variants to run only those.
// It runs once whatever -benchtime asks.
func BenchmarkAdvisoryParts(b *testing.B) {
	t := b
	ctx := context.Background()
	full := func(id int64) []any { return []any{id, "abcd1234", "bench:1", int64(30000)} }
	relA := func(id int64) []any { return []any{id, "", "0", int32(id >> 32), int32(id), "leasehold_x", "k"} }
	parts := []part{
		{"floor", `SELECT pg_try_advisory_lock($1)`, `SELECT pg_advisory_unlock($1)`, func(id int64) []any { return []any{id} }, func(id int64) []any { return []any{id} }},
		{"full", acqFull, relFull, full, relA},
		{"no-prev", strings.Replace(acqFull, "current_setting('application_name'), current_setting('idle_session_timeout'),", "", 1), relFull, full, relA},
		{"no-app", strings.Replace(acqFull, "set_config('application_name'", "concat('application_name'", 1), strings.Replace(relFull, "set_config('application_name', $2::text, false)", "$2::text", 1), full, relA},
		{"no-idle", strings.Replace(acqFull, "set_config('idle_session_timeout', $4::bigint::text, false)", "$4::bigint::text", 1), strings.Replace(relFull, "set_config('idle_session_timeout', $3::text, false)", "$3::text", 1), full, relA},
		{"no-notify", acqFull, `SELECT pg_advisory_unlock($1::bigint),
  set_config('application_name', $2::text, false) IS NOT NULL,
  set_config('idle_session_timeout', $3::text, false) IS NOT NULL`, full, func(id int64) []any { return []any{id, "", "0"} }},
	}
	lockSeq := `SELECT l.ok, CASE WHEN l.ok THEN nextval(` + seqLit + `::regclass) ELSE 0 END FROM (SELECT pg_try_advisory_lock($1::bigint) AS ok OFFSET 0) l`
	one := func(id int64) []any { return []any{id} }
	parts = append(parts,
		part{"lock+seq", lockSeq, `SELECT pg_advisory_unlock($1)`, one, one},
		part{"seq+notify", lockSeq, `SELECT pg_advisory_unlock($1::bigint), CASE WHEN pg_try_advisory_xact_lock($2::int4, $3::int4) THEN false ELSE pg_notify($4::text, $5::text) IS NOT NULL END`, one, func(id int64) []any { return []any{id, int32(id >> 32), int32(id), "leasehold_x", "k"} }},
		part{"seq+idle", `SELECT l.ok, CASE WHEN l.ok THEN nextval(` + seqLit + `::regclass) ELSE 0 END, set_config('idle_session_timeout', $2::bigint::text, false) FROM (SELECT pg_try_advisory_lock($1::bigint) AS ok OFFSET 0) l`, `SELECT pg_advisory_unlock($1), set_config('idle_session_timeout', '0', false)`, func(id int64) []any { return []any{id, int64(30000)} }, one},
		part{"seq+app", `SELECT l.ok, CASE WHEN l.ok THEN nextval(` + seqLit + `::regclass) ELSE 0 END, set_config('application_name', $2::text, false) FROM (SELECT pg_try_advisory_lock($1::bigint) AS ok OFFSET 0) l`, `SELECT pg_advisory_unlock($1), set_config('application_name', '', false)`, func(id int64) []any { return []any{id, "lh1 abcd 123 1234567 bench:1"} }, one},
		part{"seq+snotify", lockSeq, `SELECT pg_advisory_unlock($1::bigint), CASE WHEN pg_try_advisory_lock($2::int4, $3::int4) THEN NOT pg_advisory_unlock($2::int4, $3::int4) ELSE pg_notify($4::text, $5::text) IS NOT NULL END`, one, func(id int64) []any { return []any{id, int32(id >> 32), int32(id), "leasehold_x", "k"} }},
		part{"full-snotify", acqFull, strings.Replace(relFull, "CASE WHEN pg_try_advisory_xact_lock($4::int4, $5::int4) THEN false", "CASE WHEN pg_try_advisory_lock($4::int4, $5::int4) THEN NOT pg_advisory_unlock($4::int4, $5::int4)", 1), full, relA},
		part{name: "store"},
		part{name: "full-pool"},
	)
	c, err := pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Release()
	keep := map[string]bool{}
	for _, k := range strings.Split(os.Getenv("LEASEHOLD_PARTS"), ",") {
		keep[k] = true
	}
	if os.Getenv("LEASEHOLD_PARTS") != "" {
		var ps []part
		for _, p := range parts {
			if keep[p.name] {
				ps = append(ps, p)
			}
		}
		parts = ps
	}
	rounds := 16
	wall := map[string]time.Duration{}
	cpu := map[string]time.Duration{}
	cl := map[string]time.Duration{}
	const n = 2000
	for round := 0; round < rounds; round++ {
		for j := range parts {
			p := parts[(round+j)%len(parts)]
			id := int64(round*100 + j + 1)
			c0, _ := serverCPU()
			k0 := clientCPU()
			t0 := time.Now()
			if p.name == "store" {
				w, _ := storeWorker(func() postgres.Store { return advS })(ctx, fmt.Sprintf("parts/%d/%d", round, j))
				for range n {
					if ok, err := w.attempt(ctx); !ok || err != nil {
						t.Fatal(ok, err)
					}
				}
			}
			if p.name == "full-pool" {
				// The full statements on a connection taken from the pool
				// for each cycle, as the store does.
				for range n {
					pc, err := pool.Acquire(ctx)
					if err != nil {
						t.Fatal(err)
					}
					for _, q := range []struct {
						sql  string
						args []any
					}{{acqFull, full(id)}, {relFull, relA(id)}} {
						rows, err := pc.Query(ctx, q.sql, q.args...)
						if err != nil {
							t.Fatal(err)
						}
						rows.Close()
					}
					pc.Release()
				}
			}
			for range n {
				if p.name == "store" || p.name == "full-pool" {
					break
				}
				rows, err := c.Query(ctx, p.acq, p.acqArgs(id)...)
				if err != nil {
					t.Fatal(err)
				}
				rows.Close()
				rows, err = c.Query(ctx, p.rel, p.relArgs(id)...)
				if err != nil {
					t.Fatal(err)
				}
				rows.Close()
				if rows.Err() != nil {
					t.Fatal(p.name, rows.Err())
				}
			}
			wall[p.name] += time.Since(t0)
			c1, _ := serverCPU()
			cpu[p.name] += c1 - c0
			cl[p.name] += clientCPU() - k0
		}
	}
	for _, p := range parts {
		fmt.Printf("%-12s wall %6.1f µs/cycle  server CPU %6.1f  client CPU %6.1f  sum/floor's %.2f  wall/floor %.2f\n", p.name,
			float64(wall[p.name].Microseconds())/float64(rounds)/n, float64(cpu[p.name].Microseconds())/float64(rounds)/n, float64(cl[p.name].Microseconds())/float64(rounds)/n,
			float64(cpu[p.name]+cl[p.name])/float64(cpu["floor"]+cl["floor"]), float64(wall[p.name])/float64(wall["floor"]))
	}
}
