package bench

import (
	"fmt"
	"io"
	"math"
	"slices"
	"sync"
	"time"
)

// sample is one run of a cycle benchmark.
type sample struct {
	perSec   float64
	p50, p99 time.Duration
}

// quantile returns the q-quantile (0 <= q <= 1) of d by the nearest rank:
// the smallest value with at least q of the values at or below it. It
// sorts a copy; zero for none.
func quantile(d []time.Duration, q float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := slices.Clone(d)
	slices.Sort(s)
	i := int(math.Ceil(q*float64(len(s)))) - 1
	return s[min(max(i, 0), len(s)-1)]
}

// median returns the median of v (the upper one of an even count); zero
// for none.
func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	return s[len(s)/2]
}

// results holds the cycle benchmarks' rates: results[scenario][impl] is
// the cycles per second of each of its rounds (the last, full-length run
// of each benchmark name).
var (
	resultsMu sync.Mutex
	results   = map[string]map[string]map[string]float64{}
	figures   = map[string]float64{} // SUMMARY figures of the other benchmarks, by id
	figureIDs []string               // in the order first set
)

func record(scenario, impl, name string, s sample) {
	resultsMu.Lock()
	defer resultsMu.Unlock()
	if results[scenario] == nil {
		results[scenario] = map[string]map[string]float64{}
	}
	if results[scenario][impl] == nil {
		results[scenario][impl] = map[string]float64{}
	}
	results[scenario][impl][name] = s.perSec
}

// setFigure keeps a SUMMARY figure (the last value of an id counts).
func setFigure(id string, v float64) {
	resultsMu.Lock()
	defer resultsMu.Unlock()
	if _, ok := figures[id]; !ok {
		figureIDs = append(figureIDs, id)
	}
	figures[id] = v
}

// rateOf returns the median rate of impl in scenario over its rounds.
func rateOf(scenario, impl string) float64 {
	var v []float64
	for _, r := range results[scenario][impl] {
		v = append(v, r)
	}
	return median(v)
}

// ratios are the cycle goals' figures: the served cycle's cost over the
// direct one's at 1 goroutine (lower is better), and its throughput over
// the direct one's at 64 (higher is better); ok false where a rate is
// missing.
func ratios(backend string) (cost1, tput64 float64, ok1, ok64 bool) {
	d1, s1 := rateOf("g1", backend+"/direct"), rateOf("g1", backend+"/served")
	d64, s64 := rateOf("g64", backend+"/direct"), rateOf("g64", backend+"/served")
	if d1 > 0 && s1 > 0 {
		cost1, ok1 = d1/s1, true
	}
	if d64 > 0 && s64 > 0 {
		tput64, ok64 = s64/d64, true
	}
	return cost1, tput64, ok1, ok64
}

// printSummary prints the ratios of the cycle benchmarks and the SUMMARY
// lines of scripts/bench-page's summary table.
func printSummary(w io.Writer) {
	resultsMu.Lock()
	defer resultsMu.Unlock()
	if len(results) == 0 && len(figures) == 0 {
		return
	}
	fmt.Fprintln(w)
	for _, be := range backends {
		cost1, tput64, ok1, ok64 := ratios(be.name)
		if ok1 {
			fmt.Fprintf(w, "%s: a cycle through the server costs %.2fx the direct one at 1 goroutine (goal <= 1.3x)\n", be.name, cost1)
			fmt.Fprintf(w, "SUMMARY serve-%s-over-direct-1 %.3f\n", be.name, cost1)
		}
		if ok64 {
			fmt.Fprintf(w, "%s: through the server, %.2fx the direct throughput at 64 goroutines (goal >= 0.8x)\n", be.name, tput64)
			fmt.Fprintf(w, "SUMMARY serve-%s-vs-direct-64 %.3f\n", be.name, tput64)
		}
	}
	for _, id := range figureIDs {
		fmt.Fprintf(w, "SUMMARY %s %.3f\n", id, figures[id])
	}
}
