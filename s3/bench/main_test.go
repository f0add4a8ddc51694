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

const bucket = "bench"

var (
	gateway *testserver.Versity
	results benchcycle.Results
)

func TestMain(m *testing.M) {
	flag.Parse()
	if !benchcycle.Asked() {
		os.Exit(m.Run()) // no benchmarks asked for: start no server
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	var err error
	gateway, err = testserver.StartVersity(ctx, testserver.VersityOptions{Buckets: []string{bucket}})
	cancel()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Printf("s3: versitygw (posix backend) at %s\n", gateway.Endpoint())
	code := m.Run()
	gateway.Stop()
	results.Table(os.Stdout, "raw-sdk", benchcycle.Distinct())
	results.Summary(os.Stdout, "s3-vs-sdk-1", "g1", "lh-client", "raw-sdk")
	os.Exit(code)
}

// BenchmarkCycle measures acquire+release cycles on distinct keys per
// implementation and goroutine count: cycles per second and the p50 and
// p99 latency of a cycle, in rounds (-rounds) that interleave the
// implementations.
func BenchmarkCycle(b *testing.B) {
	results.Run(b, "s3", *rounds, benchcycle.Distinct(), impls(b))
}
