package bench

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// scenario is a load shape: goroutines on distinct keys, or on one hot key.
type scenario struct {
	name string
	conc int
	hot  bool
}

var scenarios = []scenario{
	{"g1", 1, false},
	{"g8", 8, false},
	{"g64", 64, false},
	{"hot8", 8, true},
}

// rounds repeats every implementation in every scenario, interleaved.
var rounds = flag.Int("rounds", 1, "rounds of BenchmarkCycle; the ratios are medians over them")

// BenchmarkCycle measures acquire+release cycles: per implementation and
// scenario, cycles per second and the p50 and p99 latency of a cycle. On the
// hot key a refused attempt is retried at once, and the cycle's latency
// includes the retries.
//
// Within a round, the implementations run one after the other in each
// scenario; with -rounds N the rounds interleave them, so the ratios printed
// at the end (medians over the rounds) compare runs made under similar
// machine load.
func BenchmarkCycle(b *testing.B) {
	for r := 1; r <= *rounds; r++ {
		for _, sc := range scenarios {
			for _, im := range impls {
				b.Run(fmt.Sprintf("%s/%s/round%d", sc.name, im.name, r), func(b *testing.B) {
					try := im.open(b)
					drive(b, im.name, sc, try)
				})
			}
		}
	}
}

func drive(b *testing.B, impl string, sc scenario, try attempt) {
	ctx := context.Background()
	prefix := fmt.Sprintf("bench/%s/%s/%d", impl, sc.name, time.Now().UnixNano())
	var next atomic.Int64
	lat := make([][]time.Duration, sc.conc)
	errs := make([]error, sc.conc)
	var wg sync.WaitGroup
	b.ResetTimer()
	start := time.Now()
	for g := range sc.conc {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := next.Add(1)
				if i > int64(b.N) {
					return
				}
				key := prefix + "/hot"
				if !sc.hot {
					key = fmt.Sprintf("%s/%d/%d", prefix, g, i%256)
				}
				t0 := time.Now()
				for refused := 0; ; refused++ {
					err := try(ctx, key)
					if err == nil {
						break
					}
					if !errors.Is(err, errHeld) || refused > 1_000_000 {
						errs[g] = err
						return
					}
				}
				lat[g] = append(lat[g], time.Since(t0))
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	if err := errors.Join(errs...); err != nil {
		b.Fatal(err)
	}
	var all []time.Duration
	for _, l := range lat {
		all = append(all, l...)
	}
	slices.Sort(all)
	perSec := float64(len(all)) / elapsed.Seconds()
	b.ReportMetric(perSec, "cycles/s")
	b.ReportMetric(float64(all[len(all)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(all[len(all)*99/100].Microseconds()), "p99-µs")
	record(sc.name, impl, b.Name(), perSec)
}
