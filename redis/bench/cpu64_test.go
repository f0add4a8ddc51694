package bench

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// cpu64Impls are the implementations BenchmarkCPU64 compares, by default
// the rows of the page's 64-goroutine rueidis goals and the floor.
var cpu64Impls = flag.String("cpu64", "raw-rueidis,bsm-redislock,rueidislock,leasehold-rueidis,lh-client-rueidis",
	"the implementations BenchmarkCPU64 compares, comma-separated (one alone, for a CPU profile of it)")

// cpu64Block is the cycles of one implementation between two readings.
const cpu64Block = 5000

// cpu64Stats sums what BenchmarkCPU64 measured of one implementation.
type cpu64Stats struct {
	wall, client time.Duration
	server       float64            // redis-server main-thread seconds
	usec         map[string]float64 // INFO commandstats usec per command
	calls        map[string]float64 // and calls
	mallocs      uint64             // heap allocations of the client process
	bytes        uint64             // and their bytes
	n            int
}

// BenchmarkCPU64 measures, at 64 goroutines on distinct keys, what a cycle
// costs the CPU that limits the throughput on a machine whose cores the
// clients and redis-server share: redis-server's main-thread CPU per cycle
// (INFO cpu), its commands per cycle and usec_per_call of each (INFO
// commandstats; a script's usec includes its calls') and the client process's CPU (getrusage)
// and heap allocations (the readings' own, the commands' and INFO's, are
// counted too, alike for every implementation). The
// implementations run in blocks of 5,000 cycles, starting with the next one
// every round, so that the load drifts over all of them alike. One op is
// one round; it prints a "CPU64 <impl> ..." line per implementation.
//
//	GOWORK=off go test -run '^$' -bench CPU64 -benchtime 5x
func BenchmarkCPU64(b *testing.B) {
	ctx := context.Background()
	admin := goredisClient(b, srv)
	byName := map[string]impl{}
	for _, im := range impls {
		byName[im.name] = im
	}
	names := strings.Split(*cpu64Impls, ",")
	tries := make([]attempt, len(names))
	stats := make([]*cpu64Stats, len(names))
	for i, name := range names {
		if _, ok := byName[name]; !ok {
			b.Fatalf("-cpu64: no implementation %q", name)
		}
		tries[i] = byName[name].open(b)
		stats[i] = &cpu64Stats{usec: map[string]float64{}, calls: map[string]float64{}}
		if err := cpu64Block64(ctx, tries[i], fmt.Sprintf("bench/cpu64/warm/%s/%d", name, b.N), 640); err != nil {
			b.Fatalf("%s: %v", name, err)
		}
	}
	for r := range b.N {
		for k := range names {
			i := (r + k) % len(names)
			s := stats[i]
			calls0, usec0 := commandStats(ctx, b, admin)
			var m0, m1 runtime.MemStats
			runtime.ReadMemStats(&m0)
			server0, client0, t0 := mainThreadCPU(ctx, b, admin), processCPU(), time.Now()
			if err := cpu64Block64(ctx, tries[i], fmt.Sprintf("bench/cpu64/%d/%d/%s", b.N, r, names[i]), cpu64Block); err != nil {
				b.Fatalf("%s: %v", names[i], err)
			}
			s.wall += time.Since(t0)
			s.client += processCPU() - client0
			s.server += mainThreadCPU(ctx, b, admin) - server0
			runtime.ReadMemStats(&m1)
			s.mallocs += m1.Mallocs - m0.Mallocs
			s.bytes += m1.TotalAlloc - m0.TotalAlloc
			calls1, usec1 := commandStats(ctx, b, admin)
			for c, v := range usec1 {
				s.usec[c] += v - usec0[c]
				s.calls[c] += float64(calls1[c] - calls0[c])
			}
			s.calls["info"] -= 2 // the readings' own
			s.n += cpu64Block
		}
	}
	b.ReportMetric(0, "ns/op")
	for i, name := range names {
		s := stats[i]
		n := float64(s.n)
		fmt.Printf("CPU64 %-18s %7.0f cycles/s  server %5.2f µs/cycle  client %5.2f µs/cycle  %5.1f allocs/cycle %6.0f B/cycle  %s\n",
			name, n/s.wall.Seconds(), s.server*1e6/n, float64(s.client.Nanoseconds())/1000/n,
			float64(s.mallocs)/n, float64(s.bytes)/n, usecPerCall(s))
	}
}

// cpu64Block64 runs n cycles of try over 64 goroutines, on 256 keys of
// each goroutine under prefix.
func cpu64Block64(ctx context.Context, try attempt, prefix string, n int) error {
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make([]error, 64)
	for g := range 64 {
		wg.Go(func() {
			for i := next.Add(1); i <= int64(n); i = next.Add(1) {
				key := prefix + "/" + strconv.Itoa(g) + "/" + strconv.FormatInt(i%256, 10)
				if err := try(ctx, key); err != nil {
					errs[g] = err
					return
				}
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// commandStats returns INFO commandstats' calls and usec per command.
func commandStats(ctx context.Context, b *testing.B, c *redis.Client) (calls map[string]int64, usec map[string]float64) {
	info, err := c.Info(ctx, "commandstats").Result()
	if err != nil {
		b.Fatal(err)
	}
	calls, usec = map[string]int64{}, map[string]float64{}
	for _, line := range strings.Split(info, "\n") {
		name, rest, ok := strings.Cut(strings.TrimSpace(line), ":")
		if !ok || !strings.HasPrefix(name, "cmdstat_") {
			continue
		}
		name = strings.TrimPrefix(name, "cmdstat_")
		for _, f := range strings.Split(rest, ",") {
			k, v, _ := strings.Cut(f, "=")
			switch k {
			case "calls":
				calls[name], _ = strconv.ParseInt(v, 10, 64)
			case "usec":
				usec[name], _ = strconv.ParseFloat(v, 64)
			}
		}
	}
	return calls, usec
}

// usecPerCall prints the commands a cycle ran, each with its calls per cycle
// and usec per call: "evalsha 2.00x2.10 get 1.00x0.15 ...".
func usecPerCall(s *cpu64Stats) string {
	var names []string
	for c, v := range s.calls {
		if v > 0 && c != "info" {
			names = append(names, c)
		}
	}
	slices.Sort(names)
	var out []string
	for _, c := range names {
		out = append(out, fmt.Sprintf("%s %.2fx%.2fµs", c, s.calls[c]/float64(s.n), s.usec[c]/s.calls[c]))
	}
	return strings.Join(out, " ")
}
