package bench

import (
	"context"
	"flag"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/leasehold-go/leasehold/internal/testserver"
	"github.com/leasehold-go/leasehold/internal/testserver/benchcycle"
)

// Run everything, in one command, from this folder:
//
//	GOWORK=off go test -run '^$' -bench . -benchtime 1s -args -rounds 3
//
// After the benchmarks, TestMain prints the median rates over the rounds
// and the SUMMARY line of scripts/bench-page's summary table.
var rounds = flag.Int("rounds", 1, "rounds of BenchmarkCycle; the ratios are medians over them")

var (
	azurite *testserver.Azurite
	results benchcycle.Results
)

func TestMain(m *testing.M) {
	flag.Parse()
	if !benchcycle.Asked() {
		os.Exit(m.Run()) // no benchmarks asked for: start no server
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	var err error
	azurite, err = testserver.StartAzurite(ctx, testserver.AzuriteOptions{})
	cancel()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Printf("azblob: Azurite (in memory) at %s\n", azurite.BlobEndpoint())
	code := m.Run()
	azurite.Stop()
	results.Table(os.Stdout, "raw-sdk", benchcycle.Distinct())
	results.Summary(os.Stdout, "azblob-vs-sdk-1", "g1", "lh-client", "raw-sdk")
	os.Exit(code)
}

// BenchmarkCycle measures acquire+release cycles on distinct keys per
// implementation and goroutine count: cycles per second and the p50 and
// p99 latency of a cycle, in rounds (-rounds) that interleave the
// implementations.
func BenchmarkCycle(b *testing.B) {
	results.Run(b, "azblob", *rounds, benchcycle.Distinct(), impls(b))
}
