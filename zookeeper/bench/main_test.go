package bench

import (
	"context"
	"flag"
	"fmt"
	"testing"

	"github.com/leasehold-go/leasehold/internal/benchcycle"
	"github.com/leasehold-go/leasehold/internal/testserver"
)

var hot = flag.Bool("hot", false, "also cycle 8 goroutines on one hot key")

var (
	ensemble *testserver.ZooKeeper
	addr     string // the follower every implementation talks to
	results  benchcycle.Results
)

func TestMain(m *testing.M) {
	benchcycle.Main(m, &results, benchcycle.Report{Ref: "zk-lock", Summary: "zk-vs-zklock-1"}, func(ctx context.Context) (func(), error) {
		var err error
		if ensemble, err = testserver.StartZooKeeper(ctx, testserver.ZooKeeperOptions{Nodes: 3}); err != nil {
			return nil, err
		}
		if addr, err = follower(ctx, ensemble); err != nil {
			ensemble.Stop()
			return nil, err
		}
		fmt.Printf("zookeeper: 3-member ensemble %s (forceSync=no); every client on the follower %s\n", ensemble.Servers(), addr)
		return ensemble.Stop, nil
	})
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
		s = append(s, benchcycle.Hot8())
	}
	return s
}

// BenchmarkCycle measures acquire+release cycles per implementation and
// scenario: cycles per second and the p50 and p99 latency of a cycle, in
// rounds (-rounds) that interleave the implementations.
func BenchmarkCycle(b *testing.B) {
	results.Run(b, "zk", scenarios(), impls(b))
}
