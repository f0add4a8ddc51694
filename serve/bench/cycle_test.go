package bench

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/internal/servetest"
	"github.com/leasehold-go/leasehold/internal/testserver"
	"github.com/leasehold-go/leasehold/redis/goredis"
	"github.com/leasehold-go/leasehold/sqlite"
)

// ttl is the lease TTL of every cycle: long enough never to expire.
const ttl = 30 * time.Second

// goroutines are the scenarios of BenchmarkCycle: the goals are at 1 and
// at 64.
var goroutines = []int{1, 64}

// backend is a store that BenchmarkCycle measures directly and through a
// server.
type backend struct {
	name string
	open func() (leasehold.Store, error)
}

var (
	embeddedStore once[leasehold.Store]
	redisStore    once[leasehold.Store]
)

var backends = []backend{
	{"embedded", func() (leasehold.Store, error) {
		return embeddedStore.get(func(ctx context.Context) (leasehold.Store, error) {
			st, err := sqlite.Open(ctx, path("cycle.db"), nil)
			if err == nil {
				atExit(func() { st.Close() })
			}
			return st, err
		})
	}},
	{"redis", func() (leasehold.Store, error) {
		return redisStore.get(openRedis)
	}},
}

// openRedis starts a redis-server (stopped at the end of the run) and
// opens the store on it, with a pool as large as the most goroutines.
func openRedis(ctx context.Context) (leasehold.Store, error) {
	srv, err := testserver.StartRedis(ctx, testserver.RedisOptions{Dir: tmp})
	if err != nil {
		return nil, err
	}
	atExit(srv.Stop)
	c := redis.NewClient(&redis.Options{Addr: srv.Addr(), PoolSize: 128})
	atExit(func() { c.Close() })
	return goredis.New(c, nil)
}

// BenchmarkCycle measures acquire+release cycles of a leasehold.Client on
// distinct keys, per backend, goroutine count and path: direct (the Client
// over the store) and served (the Client over a remote store, through a
// serve.Server on a loopback port over the same store). It reports
// cycles/s and the p50 and p99 of a cycle. With -rounds N the rounds
// interleave the two paths, so that the ratios TestMain prints (medians
// over the rounds) compare runs made under similar machine load.
func BenchmarkCycle(b *testing.B) {
	for r := 1; r <= *rounds; r++ {
		for _, n := range goroutines {
			for _, be := range backends {
				for _, p := range []string{"direct", "served"} {
					b.Run(fmt.Sprintf("g%d/%s/%s/round%d", n, be.name, p, r), func(b *testing.B) {
						st, err := be.open()
						if err != nil {
							b.Fatalf("%s: %v", be.name, err)
						}
						if p == "served" {
							st = servetest.Start(b, st).Open(b)
						}
						c, err := leasehold.New(st, nil)
						if err != nil {
							b.Fatal(err)
						}
						defer c.Close()
						s := drive(b, c, n)
						record(fmt.Sprintf("g%d", n), be.name+"/"+p, b.Name(), s)
					})
				}
			}
		}
	}
}

// drive runs b.N cycles on n goroutines, each on keys of its own, and
// reports the figures, with this process's CPU time per cycle (the
// client's, and on the served path the server's too; not redis-server's).
func drive(b *testing.B, c *leasehold.Client, n int) sample {
	ctx := context.Background()
	prefix := fmt.Sprintf("bench/%s/%d", b.Name(), time.Now().UnixNano())
	var next atomic.Int64
	lat := make([][]time.Duration, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	b.ResetTimer()
	cpu0 := cpuTime()
	start := time.Now()
	for g := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := next.Add(1); i <= int64(b.N); i = next.Add(1) {
				t0 := time.Now()
				l, err := c.Acquire(ctx, fmt.Sprintf("%s/%d/%d", prefix, g, i%256), leasehold.AcquireOptions{TTL: ttl})
				if err == nil {
					err = l.Release(ctx)
				}
				if err != nil {
					errs[g] = err
					return
				}
				lat[g] = append(lat[g], time.Since(t0))
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	cpu := cpuTime() - cpu0
	b.StopTimer()
	if err := errors.Join(errs...); err != nil {
		b.Fatal(err)
	}
	var all []time.Duration
	for _, l := range lat {
		all = append(all, l...)
	}
	s := sample{perSec: float64(len(all)) / elapsed.Seconds(), p50: quantile(all, 0.50), p99: quantile(all, 0.99)}
	b.ReportMetric(s.perSec, "cycles/s")
	b.ReportMetric(float64(s.p50.Microseconds()), "p50-µs")
	b.ReportMetric(float64(s.p99.Microseconds()), "p99-µs")
	b.ReportMetric(float64(cpu.Microseconds())/float64(len(all)), "cpu-µs/cycle")
	return s
}

// cpuTime returns the CPU time (user and system) this process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
