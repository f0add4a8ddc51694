// Package bench measures the leasehold redis and redlock stores side by side
// with github.com/bsm/redislock, github.com/go-redsync/redsync/v4 and the raw
// floor (SET NX PX, then a compare-and-delete script), against the same
// redis-server processes, started by TestMain. It is its own module so that
// the stores never depend on their peers.
//
// Run everything, in one command, from this folder:
//
//	GOWORK=off go test -run '^$' -bench . -benchtime 1s -args -rounds 3
//
// After the benchmarks, TestMain prints a table of ratios: each
// implementation's cost per acquire+release cycle over the raw floor's with
// the same client library, and its throughput over bsm/redislock's. The
// figures of scripts/bench-page's summary table come from BenchmarkRatio,
// which pairs the rates round by round.
package bench

import (
	"fmt"
	"os"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/leasehold-go/leasehold/internal/testserver"
	"github.com/leasehold-go/leasehold/redis/internal/storetest"
)

var (
	srv     *testserver.Redis   // the one server of single-node implementations
	masters []*testserver.Redis // five masters for Redlock (the first three for N=3)
)

func TestMain(m *testing.M) {
	os.Exit(storetest.Main(m, 5, func(s storetest.Servers) { srv, masters = s.Single, s.Masters }, printRatios))
}

// results holds the cycle benchmarks' results:
// results[scenario][implementation][benchmark name] = cycles per second of
// the benchmark's last (full-length) run; each round has its own name.
var (
	resultsMu sync.Mutex
	results   = map[string]map[string]map[string]float64{}
)

func record(scenario, impl, name string, perSec float64) {
	resultsMu.Lock()
	defer resultsMu.Unlock()
	if results[scenario] == nil {
		results[scenario] = map[string]map[string]float64{}
	}
	if results[scenario][impl] == nil {
		results[scenario][impl] = map[string]float64{}
	}
	results[scenario][impl][name] = perSec
}

// rate is the median over the rounds.
func rate(runs map[string]float64) float64 {
	var v []float64
	for _, r := range runs {
		v = append(v, r)
	}
	sort.Float64s(v)
	return v[len(v)/2]
}

// floorOf names the raw floor an implementation is compared with: the one
// using the same client library.
func floorOf(impl string) string {
	if strings.Contains(impl, "rueidis") {
		return "raw-rueidis"
	}
	return "raw-goredis"
}

func printRatios() {
	resultsMu.Lock()
	defer resultsMu.Unlock()
	if len(results) == 0 {
		return
	}
	var order []string
	impls := map[string]bool{}
	for _, sc := range scenarios {
		if r, ok := results[sc.name]; ok {
			order = append(order, sc.name)
			for i := range r {
				impls[i] = true
			}
		}
	}
	var names []string
	for i := range impls {
		names = append(names, i)
	}
	sort.Strings(names)
	fmt.Println()
	fmt.Println("acquire+release cycles: cost over the raw floor with the same client (lower is better) / throughput over bsm/redislock (higher is better)")
	fmt.Printf("%-26s", "implementation")
	for _, s := range order {
		fmt.Printf(" %-20s", s)
	}
	fmt.Println()
	for _, n := range names {
		fmt.Printf("%-26s", n)
		for _, s := range order {
			r := results[s]
			if len(r[n]) == 0 {
				fmt.Printf(" %-20s", "-")
				continue
			}
			v := rate(r[n])
			cell := "-"
			if len(r[floorOf(n)]) > 0 {
				cell = fmt.Sprintf("%.2fx", rate(r[floorOf(n)])/v)
			}
			if len(r["bsm-redislock"]) > 0 {
				cell += fmt.Sprintf(" / %.2fx", v/rate(r["bsm-redislock"]))
			}
			fmt.Printf(" %-20s", cell)
		}
		fmt.Println()
	}
}
