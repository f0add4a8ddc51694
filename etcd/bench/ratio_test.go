package bench

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// BenchmarkRatio measures the same scenarios as BenchmarkCycle as paired
// ratios, which hold up on a shared, noisy machine better than absolute
// rates: each round runs every implementation for the same time, in
// rotating order, and the reported metric is the median over rounds of
// leasehold's rate divided by the other's in the same round. Run with
// -benchtime 1x (each sub-benchmark runs LEASEHOLD_ETCD_ROUNDS rounds,
// default 7, of 700 ms per implementation).
func BenchmarkRatio(b *testing.B) {
	cli, st, lc, lease := cycleFixture(b)
	rounds := 7
	if v := envInt("LEASEHOLD_ETCD_ROUNDS"); v > 0 {
		rounds = v
	}
	const slot = 700 * time.Millisecond
	impls := []struct {
		name string
		c    cycler
	}{
		{"raw", raw(lease)},
		{"leasehold", leaseholdStore(st)},
		{"mutex", mutex},
		{"client", leaseholdClient(lc)},
	}
	for _, sc := range []struct {
		name    string
		workers int
		hot     bool
	}{{"distinct-1", 1, false}, {"distinct-8", 8, false}, {"distinct-64", 64, false}, {"hot-8", 8, true}} {
		b.Run(sc.name, func(b *testing.B) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
			defer cancel()
			pfx := prefix(b)
			workers := make([][]func(context.Context) error, len(impls))
			for j, im := range impls {
				for i := range sc.workers {
					k := fmt.Sprintf("%s%s/%d", pfx, im.name, i)
					if sc.hot {
						k = pfx + im.name + "/hot"
					}
					fn, done := im.c(b, cli, k, sc.hot)
					defer done()
					if err := fn(ctx); err != nil { // warm up
						b.Fatal(err)
					}
					workers[j] = append(workers[j], fn)
				}
			}
			rates := make([][]float64, len(impls)) // [impl][round]
			cpus := make([][]float64, len(impls))  // CPU µs per cycle, bench process + etcd members
			for r := range rounds {
				for o := range impls {
					j := (o + r) % len(impls) // rotate the order
					c0 := cpuTime()
					rate, n, err := runFor(ctx, workers[j], slot)
					if err != nil {
						b.Fatal(err)
					}
					rates[j] = append(rates[j], rate)
					cpus[j] = append(cpus[j], float64((cpuTime()-c0).Microseconds())/float64(max(n, 1)))
				}
			}
			for j, im := range impls {
				b.ReportMetric(median(cpus[j]), im.name+"-cpu-us/cycle")
			}
			ratios := func(a, c int) []float64 { // sorted
				var rs []float64
				for r := range rounds {
					rs = append(rs, rates[a][r]/rates[c][r])
				}
				slices.Sort(rs)
				return rs
			}
			ratio := func(a, c int) float64 { return median(ratios(a, c)) }
			b.ReportMetric(median(rates[1]), "leasehold-cycles/s")
			b.ReportMetric(ratio(1, 0), "leasehold/raw")
			b.ReportMetric(ratio(1, 2), "leasehold/mutex")
			b.ReportMetric(ratio(3, 0), "client/raw")
			b.ReportMetric(ratio(3, 2), "client/mutex")
			b.ReportMetric(ratio(2, 0), "mutex/raw")
			if !sc.hot { // for scripts/bench-page's summary table
				rs := ratios(3, 2) // the median, then the spread over the rounds
				fmt.Printf("SUMMARY etcd-vs-mutex-%d %.3f %.3f %.3f\n", sc.workers, median(rs), rs[0], rs[len(rs)-1])
			}
		})
	}
}

// runFor runs the workers' cycles for d and returns cycles per second and
// the number of cycles.
func runFor(ctx context.Context, fns []func(context.Context) error, d time.Duration) (float64, int64, error) {
	var (
		n    atomic.Int64
		wg   sync.WaitGroup
		fail atomic.Value
	)
	start := time.Now()
	end := start.Add(d)
	for _, fn := range fns {
		wg.Go(func() {
			for time.Now().Before(end) {
				if err := fn(ctx); err != nil {
					fail.CompareAndSwap(nil, err)
					return
				}
				n.Add(1)
			}
		})
	}
	wg.Wait()
	if err, _ := fail.Load().(error); err != nil {
		return 0, 0, err
	}
	return float64(n.Load()) / time.Since(start).Seconds(), n.Load(), nil
}

// cpuTime returns the CPU time used so far by this process and the etcd
// members: a cost per cycle that does not depend on what else the machine
// is running.
func cpuTime() time.Duration {
	self, server := procCPU()
	return self + server
}

func median(xs []float64) float64 {
	xs = slices.Clone(xs)
	slices.Sort(xs)
	if len(xs) == 0 {
		return 0
	}
	return xs[len(xs)/2]
}
