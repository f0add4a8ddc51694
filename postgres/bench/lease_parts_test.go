package bench

import (
	"context"
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/leasehold-go/leasehold"
)

const leaseAcq = `WITH ins AS (
  INSERT INTO public.leasehold_leases AS l (key, owner, label, token, expires_at)
  VALUES ($1::text, $2::text, $3::text, 1, clock_timestamp() + $4::bigint::float8 * interval '1 microsecond')
  ON CONFLICT (key) DO UPDATE
    SET owner = excluded.owner, label = excluded.label, token = l.token + 1, expires_at = excluded.expires_at
    WHERE l.owner IS NULL OR l.expires_at <= clock_timestamp()
  RETURNING l.token
)
SELECT true, ins.token, ''::text, 0::bigint FROM ins
UNION ALL
SELECT false, h.token, h.label, COALESCE((extract(epoch FROM h.expires_at - clock_timestamp()) * 1000000)::bigint, 0)
  FROM public.leasehold_leases h WHERE h.key = $1::text AND NOT EXISTS (SELECT 1 FROM ins)`

const leaseAcqPlain = `INSERT INTO public.leasehold_leases AS l (key, owner, label, token, expires_at)
  VALUES ($1::text, $2::text, $3::text, 1, clock_timestamp() + $4::bigint::float8 * interval '1 microsecond')
  ON CONFLICT (key) DO UPDATE
    SET owner = excluded.owner, label = excluded.label, token = l.token + 1, expires_at = excluded.expires_at
    WHERE l.owner IS NULL OR l.expires_at <= clock_timestamp()
  RETURNING true, l.token, ''::text, 0::bigint`

const leaseRel = `UPDATE public.leasehold_leases SET owner = NULL, label = '', expires_at = NULL
WHERE key = $1::text AND owner = $2::text AND token = $3::bigint
RETURNING CASE WHEN pg_try_advisory_xact_lock($4::int4, $5::int4) THEN false
  ELSE pg_notify($6::text, $1::text) IS NOT NULL END`

const leaseRelNoNotify = `UPDATE public.leasehold_leases SET owner = NULL, label = '', expires_at = NULL
WHERE key = $1::text AND owner = $2::text AND token = $3::bigint RETURNING false`

type sqlWorker struct {
	key, owner string
	acq, rel   string
	relArgs    int
}

func (w *sqlWorker) attempt(ctx context.Context) (bool, error) {
	var ok bool
	var tok, rem int64
	var label string
	if err := pool.QueryRow(ctx, w.acq, w.key, w.owner, "bench:1", int64(30e6)).Scan(&ok, &tok, &label, &rem); err != nil {
		if err == pgx.ErrNoRows {
			return false, nil
		}
		return false, err
	}
	args := []any{w.key, w.owner, tok, int32(1), int32(2), "leasehold_x"}
	var n bool
	return true, pool.QueryRow(ctx, w.rel, args[:w.relArgs]...).Scan(&n)
}

func (w *sqlWorker) close() {}

func sqlContender(name, acq, rel string, relArgs int) contender {
	return contender{name, func(_ context.Context, key string) (worker, error) {
		return &sqlWorker{key: key, owner: leasehold.NewOwnerID(), acq: acq, rel: rel, relArgs: relArgs}, nil
	}}
}

// BenchmarkLeaseParts64 runs the lease-row mode's statements raw at 64
// goroutines on keys of their own next to the store, the upsert floor and
// pglock, and prints each one's client and server CPU per cycle: at 64
// goroutines both cores are busy, so throughput follows their sum.
// "lease-sql" is the store's SQL without its Go code, "no-notify" its
// release without the waiter check, "plain-acq" its acquire without the
// holder report (the UNION ALL branch). It runs once whatever -benchtime
// asks.
func BenchmarkLeaseParts64(b *testing.B) {
	t := b
	cs := []contender{
		contenders[0], // lease (the store)
		sqlContender("lease-sql", leaseAcq, leaseRel, 6),
		sqlContender("no-notify", leaseAcq, leaseRelNoNotify, 3),
		sqlContender("plain-acq", leaseAcqPlain, leaseRel, 6),
		contenders[1], // floor-upsert
		contenders[4], // pglock
	}
	tot := map[string]*cpuCost{}
	for round := 0; round < 4; round++ {
		for j := range cs {
			c := cs[(round+j)%len(cs)]
			r, err := cpuRound(c, 64, 1000+round)
			if err != nil {
				t.Fatal(c.name, err)
			}
			if tot[c.name] == nil {
				tot[c.name] = &cpuCost{}
			}
			tot[c.name].add(r)
		}
	}
	var upd, hot, pages int64
	if err := pool.QueryRow(context.Background(), `SELECT n_tup_upd, n_tup_hot_upd, pg_relation_size(relid) / 8192 FROM pg_stat_user_tables WHERE relname = 'leasehold_leases'`).Scan(&upd, &hot, &pages); err != nil {
		t.Fatal(err)
	}
	fmt.Printf("lease table: %d updates, %d HOT, %d pages\n", upd, hot, pages)
	for _, c := range cs {
		x := tot[c.name]
		n := float64(x.cycles)
		fmt.Printf("%-12s client %6.1f server %6.1f sum %6.1f µs/cycle, %5.0f cycles/s\n", c.name, float64(x.client.Microseconds())/n, float64(x.server.Microseconds())/n, float64((x.client+x.server).Microseconds())/n, n/x.wall.Seconds())
	}
}
