package bench

import (
	"context"
	"fmt"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// BenchmarkShapes prices the request shapes of an acquire+release cycle on
// distinct keys, in interleaved rounds: the raw floor (put-if-absent
// transaction, then a plain Delete) against variants that change one part
// of it to what the store sends (a compare over the queue's prefix; a
// token-checked release transaction with 1 or 3 compares). It reports the
// CPU per cycle of this process and the etcd members, and each variant's
// rate over the floor's. Run with -benchtime 1x; LEASEHOLD_ETCD_ROUNDS
// rounds (default 7) of 700 ms per variant.
func BenchmarkShapes(b *testing.B) {
	cli, _, _, lease := cycleFixture(b)
	rounds := 7
	if v := envInt("LEASEHOLD_ETCD_ROUNDS"); v > 0 {
		rounds = v
	}
	type shape struct {
		name           string
		prefix         bool // compare over the key's prefix, as Acquire does
		releaseCmps    int  // 0: plain Delete; 1: CreateRevision; 3: and the owner's value
		requireLeader  bool
		valueBytes     int  // 0: an empty value; else the store's (61 bytes)
		firstCreateGet bool // Else(Get(prefix, first create)) instead of Get(key)
	}
	shapes := []shape{
		{name: "raw"},
		{name: "prefix-cmp", prefix: true, firstCreateGet: true},
		{name: "release-1cmp", releaseCmps: 1},
		{name: "release-3cmp", releaseCmps: 3}, // with the store's value
		{name: "require-leader", requireLeader: true},
		{name: "value-60B", valueBytes: 60},
		{name: "store-like-3cmp", prefix: true, firstCreateGet: true, releaseCmps: 3, requireLeader: true, valueBytes: 60},
		{name: "store-like-1cmp", prefix: true, firstCreateGet: true, releaseCmps: 1, requireLeader: true, valueBytes: 60},
	}
	owner := `{"owner":"0123456789abcdef0123456789abcdef"`
	mk := func(sh shape, key string) func(context.Context) error {
		val := "" // as a Mutex's
		if sh.valueBytes > 0 || sh.releaseCmps == 3 {
			val = owner + `,"label":"bench"}` // as the store's
		}
		q := key + "/q/"
		name := q + "0000000000000001-0"
		if !sh.prefix {
			name = key
		}
		return func(ctx context.Context) error {
			if sh.requireLeader {
				ctx = clientv3.WithRequireLeader(ctx)
			}
			cmp := clientv3.Compare(clientv3.CreateRevision(name), "=", 0)
			els := clientv3.OpGet(name)
			if sh.prefix {
				cmp = clientv3.Compare(clientv3.CreateRevision(q), "=", 0).WithPrefix()
			}
			if sh.firstCreateGet {
				els = clientv3.OpGet(q, clientv3.WithFirstCreate()...)
			}
			resp, err := cli.Txn(ctx).If(cmp).Then(clientv3.OpPut(name, val, clientv3.WithLease(lease))).Else(els).Commit()
			if err != nil {
				return err
			}
			if !resp.Succeeded {
				return fmt.Errorf("%s held", name)
			}
			rev := resp.Header.Revision
			switch sh.releaseCmps {
			case 0:
				_, err = cli.Delete(ctx, name)
			default:
				cmps := []clientv3.Cmp{clientv3.Compare(clientv3.CreateRevision(name), "=", rev)}
				if sh.releaseCmps == 3 {
					cmps = append(cmps, clientv3.Compare(clientv3.Value(name), ">", owner), clientv3.Compare(clientv3.Value(name), "<", owner+"~"))
				}
				var r *clientv3.TxnResponse
				r, err = cli.Txn(ctx).If(cmps...).Then(clientv3.OpDelete(name)).Commit()
				if err == nil && !r.Succeeded {
					err = fmt.Errorf("%s: release compare failed", name)
				}
			}
			return err
		}
	}
	for _, workers := range []int{1, 8, 64} {
		b.Run(fmt.Sprint("distinct-", workers), func(b *testing.B) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
			defer cancel()
			pfx := prefix(b)
			fns := make([][]func(context.Context) error, len(shapes))
			for j, sh := range shapes {
				for i := range workers {
					fn := mk(sh, fmt.Sprintf("%s%s/%d", pfx, sh.name, i))
					if err := fn(ctx); err != nil {
						b.Fatal(err)
					}
					fns[j] = append(fns[j], fn)
				}
			}
			rates := make([][]float64, len(shapes))
			cpus := make([][]float64, len(shapes))
			for r := range rounds {
				for o := range shapes {
					j := (o + r) % len(shapes)
					c0 := cpuTime()
					rate, n, err := runFor(ctx, fns[j], 700*time.Millisecond)
					if err != nil {
						b.Fatal(err)
					}
					rates[j] = append(rates[j], rate)
					cpus[j] = append(cpus[j], float64((cpuTime()-c0).Microseconds())/float64(max(n, 1)))
				}
			}
			for j, sh := range shapes {
				var rs []float64
				for r := range rounds {
					rs = append(rs, rates[j][r]/rates[0][r])
				}
				b.ReportMetric(median(cpus[j]), sh.name+"-cpu-us/cycle")
				b.ReportMetric(median(rs), sh.name+"/raw")
			}
		})
	}
}
