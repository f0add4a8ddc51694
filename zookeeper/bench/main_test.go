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
// -hot adds 8 goroutines on one key (the blocking recipes: zk.Lock, the
// Curator recipe's watch on its predecessor, the store's AcquireWait).
// After the benchmarks, TestMain prints the median rates over the rounds
// and the SUMMARY line of scripts/bench-page's summary table.
var (
	rounds = flag.Int("rounds", 1, "rounds of BenchmarkCycle; the ratios are medians over them")
	hot    = flag.Bool("hot", false, "also cycle 8 goroutines on one hot key")
)

var (
	ensemble *testserver.ZooKeeper
	addr     string // the follower every implementation talks to
	results  benchcycle.Results
)

func TestMain(m *testing.M) {
	flag.Parse()
	if !benchcycle.Asked() {
		os.Exit(m.Run()) // no benchmarks asked for: start no server
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	var err error
	ensemble, err = testserver.StartZooKeeper(ctx, testserver.ZooKeeperOptions{Nodes: 3})
	if err == nil {
		addr, err = follower(ctx, ensemble)
	}
	cancel()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		if ensemble != nil {
			ensemble.Stop()
		}
		os.Exit(1)
	}
	fmt.Printf("zookeeper: 3-member ensemble %s (forceSync=no); every client on the follower %s\n", ensemble.Servers(), addr)
	code := m.Run()
	ensemble.Stop()
	results.Table(os.Stdout, "zk-lock", scenarios())
	results.Summary(os.Stdout, "zk-vs-zklock-1", "g1", "lh-client", "zk-lock")
	os.Exit(code)
}

// follower returns the address of a member that does not lead: every
// implementation connects to it alone, so that none of them is measured
// against the leader and another against a follower.
func follower(ctx context.Context, z *testserver.ZooKeeper) (string, error) {
	l, err := z.Leader(ctx)
	if err != nil {
		return "", err
	}
	return z.Nodes[(l+1)%len(z.Nodes)].Addr(), nil
}

func scenarios() []benchcycle.Scenario {
	s := benchcycle.Distinct()
	if *hot {
		s = append(s, benchcycle.Hot8)
	}
	return s
}

// BenchmarkCycle measures acquire+release cycles per implementation and
// scenario: cycles per second and the p50 and p99 latency of a cycle, in
// rounds (-rounds) that interleave the implementations.
func BenchmarkCycle(b *testing.B) {
	results.Run(b, "zk", *rounds, scenarios(), impls(b))
}
