// Package benchcycle runs the acquire+release cycle benchmarks that the store
// helpers' bench modules share (zookeeper/bench, consul/bench,
// azblob/bench, s3/bench, dynamodb/bench; etcd/bench drives its cycles with [Drive]):
// every implementation (the raw protocol floor, the peer libraries, the
// leasehold store and the leasehold Client) cycles on the same server, with
// W goroutines on keys of their own (or one hot key), in rounds that
// interleave the implementations. It needs no server: each module starts
// its own, and builds the store ([Store]) and the client ([Client]) over
// it.
//
// Each sub-benchmark is named scenario/implementation/roundN and reports
// cycles/s, p50-ms and p99-ms, the names and units scripts/bench-page's
// bench-peers.awk reads. The medians over the rounds give the ratios that
// [Results.Summary] prints as "SUMMARY <id> <value> <min> <max>" lines for the page's
// summary table.
package benchcycle

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// ErrHeld is what a try-once cycle returns when the key was held: on a hot
// key the harness tries again at once, and the cycle's time includes the
// retries.
var ErrHeld = errors.New("cycle: the key is held")

// Cycle is one worker's acquire+release cycle on its key.
type Cycle func(ctx context.Context) error

// Impl is one implementation under test.
type Impl struct {
	// Name names it in the benchmarks' names. bench-peers.awk leaves out of
	// the page's peer table the names that start with "leasehold" or
	// "lh-" (leasehold is measured by `leasehold bench`), and takes names
	// holding "raw" or "floor" for floors.
	Name string
	// New makes one worker's cycle on key (hot: a key every worker
	// shares, so its acquire must wait or return ErrHeld), before the
	// timing starts; done, if not nil, runs after the timing.
	New func(b *testing.B, key string, hot bool) (c Cycle, done func())
}

// Scenario is a load shape: Workers goroutines on keys of their own, or on
// one hot key.
type Scenario struct {
	Name    string // g1, g8, g64, hot8: bench-peers.awk reads the count from it
	Workers int
	Hot     bool
}

// Distinct returns the distinct-key scenarios g1, g8 and g64.
func Distinct() []Scenario {
	return []Scenario{{"g1", 1, false}, {"g8", 8, false}, {"g64", 64, false}}
}

// Hot8 returns the scenario of 8 goroutines on one key.
func Hot8() Scenario { return Scenario{"hot8", 8, true} }

// Results collects the rates the cycle benchmarks measured; the zero value
// is ready to use, and safe for concurrent use.
type Results struct {
	mu    sync.Mutex
	rates map[string]map[string]map[int]float64 // [scenario][impl][round] cycles/s
	order []string                              // implementations, in the order first measured
	scs   []string                              // scenarios, in the order first measured
	runs  atomic.Int64                          // makes every run's keys its own

	rounds int // the -rounds flag; set before the benchmarks run
}

// Run runs the rounds (the -rounds flag that [Main] adds; 1 without it)
// of every scenario and implementation as sub-benchmarks of b, named
// scenario/implementation/roundN, the implementations in an order rotated
// every round. prefix starts every key (the
// implementations map keys to their stores' names).
func (r *Results) Run(b *testing.B, prefix string, scenarios []Scenario, impls []Impl) {
	for round := 1; round <= max(r.rounds, 1); round++ {
		for _, sc := range scenarios {
			for k := range impls {
				// The order rotates every round: none runs always first
				// (after the previous scenario's heaviest) or last.
				im := impls[(k+round-1)%len(impls)]
				b.Run(fmt.Sprintf("%s/%s/round%d", sc.Name, im.Name, round), func(b *testing.B) {
					keys := fmt.Sprintf("%s/%d/%d/%s/%s", prefix, os.Getpid(), r.runs.Add(1), sc.Name, im.Name)
					rate := r.drive(b, keys, sc, im)
					r.record(sc.Name, im.Name, round, rate)
				})
			}
		}
	}
}

// drive runs b.N cycles of im over sc's workers and reports their rate and
// latencies; it returns the rate.
func (r *Results) drive(b *testing.B, keys string, sc Scenario, im Impl) float64 {
	cycles := make([]Cycle, sc.Workers)
	for i := range cycles {
		key := fmt.Sprintf("%s/%d", keys, i)
		if sc.Hot {
			key = keys + "/hot"
		}
		c, done := im.New(b, key, sc.Hot)
		if done != nil {
			defer done()
		}
		cycles[i] = c
	}
	return Drive(b, im.Name, cycles)
}

// Drive runs b.N cycles over one goroutine per cycle after a warm-up cycle
// each (sessions, connections, the keys' objects), outside the timing. A
// cycle that returns ErrHeld is tried again at once, its time included. It
// reports cycles/s and the p50-ms and p99-ms latency of a cycle, fails b
// (naming name) when a cycle fails, and returns the rate.
func Drive(b *testing.B, name string, cycles []Cycle) float64 {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	for _, c := range cycles {
		if err := retryHeld(ctx, c); err != nil {
			b.Fatalf("%s: warm-up: %v", name, err)
		}
	}
	var (
		next atomic.Int64
		wg   sync.WaitGroup
		fail atomic.Value
		mu   sync.Mutex
		lat  []time.Duration
	)
	b.ResetTimer()
	start := time.Now()
	for _, c := range cycles {
		wg.Go(func() {
			var mine []time.Duration
			for next.Add(1) <= int64(b.N) {
				t0 := time.Now()
				if err := retryHeld(ctx, c); err != nil {
					fail.CompareAndSwap(nil, err)
					return
				}
				mine = append(mine, time.Since(t0))
			}
			mu.Lock()
			lat = append(lat, mine...)
			mu.Unlock()
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	if err, _ := fail.Load().(error); err != nil {
		b.Fatalf("%s: %v", name, err)
	}
	rate := float64(len(lat)) / elapsed.Seconds()
	b.ReportMetric(rate, "cycles/s")
	ReportPercentiles(b, lat, "")
	return rate
}

// ReportPercentiles reports the p50 and p99 of lat, in milliseconds, as
// the metrics prefix+"p50-ms" and prefix+"p99-ms"; nothing for none.
func ReportPercentiles(b *testing.B, lat []time.Duration, prefix string) {
	if len(lat) == 0 {
		return
	}
	slices.Sort(lat)
	at := func(p float64) float64 {
		return float64(lat[min(len(lat)-1, int(p*float64(len(lat))))].Microseconds()) / 1000
	}
	b.ReportMetric(at(0.50), prefix+"p50-ms")
	b.ReportMetric(at(0.99), prefix+"p99-ms")
}

// Asked reports whether the test binary was asked to run benchmarks
// (-test.bench given), after flag.Parse: a TestMain starts its servers
// only then.
func Asked() bool {
	f := flag.Lookup("test.bench")
	return f != nil && f.Value.String() != ""
}

// retryHeld runs c until it does not return ErrHeld.
func retryHeld(ctx context.Context, c Cycle) error {
	for {
		err := c(ctx)
		if !errors.Is(err, ErrHeld) {
			return err
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
}

// record keeps the rate of the last run of a sub-benchmark (the framework
// runs it with growing b.N; the last run is the full-length one).
func (r *Results) record(sc, impl string, round int, rate float64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.rates == nil {
		r.rates = map[string]map[string]map[int]float64{}
	}
	if r.rates[sc] == nil {
		r.rates[sc] = map[string]map[int]float64{}
		r.scs = append(r.scs, sc)
	}
	if r.rates[sc][impl] == nil {
		r.rates[sc][impl] = map[int]float64{}
		if !slices.Contains(r.order, impl) {
			r.order = append(r.order, impl)
		}
	}
	r.rates[sc][impl][round] = rate
}

// Rate returns the median over the rounds of impl's cycles/s in scenario
// sc; 0 when it was not measured.
func (r *Results) Rate(sc, impl string) float64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	var v []float64
	for _, x := range r.rates[sc][impl] {
		v = append(v, x)
	}
	return Median(v)
}

// Median returns the median of xs (of an even count, the upper middle
// value); 0 for none.
func Median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	xs = slices.Clone(xs)
	slices.Sort(xs)
	return xs[len(xs)/2]
}

// Summary prints "SUMMARY id median min max" to w: the ratios of impl a's
// rate over impl b's in scenario sc, each round's from the two rates of
// that round (measured next to each other, so that the machine's load
// drifts over both alike), their median, and the smallest and largest (the
// spread over the rounds, which the page prints next to the figure); when
// both were measured in at least one round.
func (r *Results) Summary(w io.Writer, id, sc, a, b string) {
	r.mu.Lock()
	var rs []float64
	for round, ra := range r.rates[sc][a] {
		if rb := r.rates[sc][b][round]; ra > 0 && rb > 0 {
			rs = append(rs, ra/rb)
		}
	}
	r.mu.Unlock()
	if len(rs) > 0 {
		slices.Sort(rs)
		fmt.Fprintf(w, "SUMMARY %s %.3f %.3f %.3f\n", id, Median(rs), rs[0], rs[len(rs)-1])
	}
}

// Table prints, per implementation and scenario measured, the median
// cycles/s and its ratio to ref's (higher is faster than ref), for a reader
// of the benchmark's output.
func (r *Results) Table(w io.Writer, ref string) {
	r.mu.Lock()
	impls, scenarios := slices.Clone(r.order), slices.Clone(r.scs)
	r.mu.Unlock()
	if len(impls) == 0 {
		return
	}
	fmt.Fprintf(w, "\nmedian cycles/s over the rounds (x: over %s's)\n%-22s", ref, "implementation")
	for _, sc := range scenarios {
		fmt.Fprintf(w, " %-18s", sc)
	}
	fmt.Fprintln(w)
	for _, im := range impls {
		fmt.Fprintf(w, "%-22s", im)
		for _, sc := range scenarios {
			cell := "-"
			if v := r.Rate(sc, im); v > 0 {
				cell = fmt.Sprintf("%.0f", v)
				if base := r.Rate(sc, ref); base > 0 {
					cell += fmt.Sprintf(" (%.2fx)", v/base)
				}
			}
			fmt.Fprintf(w, " %-18s", cell)
		}
		fmt.Fprintln(w)
	}
}
