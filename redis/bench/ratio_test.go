package bench

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

var (
	ratioRounds = flag.Int("ratio-rounds", 9, "rounds of BenchmarkRatio")
	ratioSlot   = flag.Duration("ratio-slot", 400*time.Millisecond, "how long BenchmarkRatio runs each implementation per round")
)

// ratioRow is one ratio of the page's summary table: the rate of a over
// that of b at conc goroutines (for a cost over a floor, a is the floor).
type ratioRow struct {
	id   string
	conc int
	a, b string
}

// ratioRows are the page's Redis rows, in scripts/lib/bench-goals.tsv.
var ratioRows = []ratioRow{
	{"redis-goredis-vs-bsm-1", 1, "lh-client-goredis", "bsm-redislock"},
	{"redis-client-over-floor-1", 1, "raw-goredis", "lh-client-goredis"},
	{"redis-store-over-floor-1", 1, "raw-goredis", "leasehold-goredis"},
	{"redlock3-vs-redsync-1", 1, "leasehold-redlock-3", "redsync-3"},
	{"redlock5-vs-redsync-1", 1, "leasehold-redlock-5", "redsync-5"},
	{"redis-goredis-vs-bsm-64", 64, "lh-client-goredis", "bsm-redislock"},
	{"redis-rueidis-vs-bsm-64", 64, "lh-client-rueidis", "bsm-redislock"},
	{"redis-rueidis-vs-rueidislock-64", 64, "lh-client-rueidis", "rueidislock"},
}

// BenchmarkRatio measures the page's Redis ratios as paired ratios, which
// hold up on a shared, noisy machine where rates measured apart do not: per
// goroutine count it opens every implementation a row names, warms each up
// for one slot, then runs rounds in which each runs for the same slot
// (-ratio-slot, 400 ms), in an order rotated every round. A row's figure is
// the median over the rounds (-ratio-rounds, 9) of its two rates in the
// same round; it prints "SUMMARY <id> <median> <min> <max>" (the spread
// over the rounds, for scripts/bench-page's summary table) and a "RATIO"
// line with every round's ratio. One run does all rounds: run it with
// -benchtime 1x (about a minute).
//
//	GOWORK=off go test -run '^$' -bench Ratio -benchtime 1x
func BenchmarkRatio(b *testing.B) {
	byName := map[string]impl{}
	for _, im := range impls {
		byName[im.name] = im
	}
	for _, conc := range []int{1, 64} {
		var names []string
		for _, row := range ratioRows {
			for _, n := range []string{row.a, row.b} {
				if row.conc == conc && !slices.Contains(names, n) {
					names = append(names, n)
				}
			}
		}
		b.Run(fmt.Sprintf("g%d", conc), func(b *testing.B) {
			if b.N > 1 {
				return // the rounds ran in the first run; -benchtime 1x asks for no more
			}
			rates := ratioRates(b, byName, names, conc)
			for _, row := range ratioRows {
				if row.conc == conc {
					printRatio(row.id, rates[row.a], rates[row.b])
				}
			}
		})
	}
}

// ratioRates runs the rounds of names at conc goroutines and returns each
// one's rates, round by round.
func ratioRates(b *testing.B, byName map[string]impl, names []string, conc int) map[string][]float64 {
	ctx := context.Background()
	tries := make([]attempt, len(names))
	for i, n := range names {
		tries[i] = byName[n].open(b)
	}
	rates := map[string][]float64{}
	for r := -1; r < *ratioRounds; r++ { // round -1 warms up
		for k := range names {
			i := (k + max(r, 0)) % len(names)
			prefix := fmt.Sprintf("bench/ratio/%d/%s/%d/%d", conc, names[i], time.Now().UnixNano(), r)
			rate, err := runFor(ctx, tries[i], conc, prefix, *ratioSlot)
			if err != nil {
				b.Fatalf("%s: %v", names[i], err)
			}
			if r >= 0 {
				rates[names[i]] = append(rates[names[i]], rate)
			}
		}
	}
	return rates
}

// printRatio prints the SUMMARY and RATIO lines of a row from the two
// implementations' rates, round by round.
func printRatio(id string, a, b []float64) {
	var rs []float64
	for i := range min(len(a), len(b)) {
		if b[i] > 0 {
			rs = append(rs, a[i]/b[i])
		}
	}
	if len(rs) == 0 {
		return
	}
	slices.Sort(rs)
	fmt.Printf("SUMMARY %s %.3f %.3f %.3f\n", id, rs[len(rs)/2], rs[0], rs[len(rs)-1])
	var s []string
	for _, r := range rs {
		s = append(s, strconv.FormatFloat(r, 'f', 3, 64))
	}
	fmt.Printf("RATIO %s rounds %d sorted %s\n", id, len(rs), strings.Join(s, " "))
}

// runFor runs try at conc goroutines, each on 256 keys of its own under
// prefix, for d, and returns the cycles per second.
func runFor(ctx context.Context, try attempt, conc int, prefix string, d time.Duration) (float64, error) {
	var (
		n    atomic.Int64
		stop atomic.Bool
		wg   sync.WaitGroup
	)
	errs := make([]error, conc)
	start := time.Now()
	time.AfterFunc(d, func() { stop.Store(true) })
	for g := range conc {
		wg.Go(func() {
			for i := 0; !stop.Load(); i++ {
				if err := try(ctx, prefix+"/"+strconv.Itoa(g)+"/"+strconv.Itoa(i%256)); err != nil {
					errs[g] = err
					return
				}
				n.Add(1)
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return 0, err
	}
	return float64(n.Load()) / time.Since(start).Seconds(), nil
}
