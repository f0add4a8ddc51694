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
// -servers 3 runs on a cluster of 3 server agents (with their Raft logs on
// disk) instead of one dev agent. After the benchmarks, TestMain prints the
// median rates over the rounds and the SUMMARY line of scripts/bench-page's
// summary table.
var (
	rounds  = flag.Int("rounds", 1, "rounds of BenchmarkCycle; the ratios are medians over them")
	servers = flag.Int("servers", 0, "server agents; 0 means one dev agent")
)

var (
	cluster *testserver.Consul
	addr    string // the agent every implementation talks to
	results benchcycle.Results
)

func TestMain(m *testing.M) {
	flag.Parse()
	if !benchcycle.Asked() {
		os.Exit(m.Run()) // no benchmarks asked for: start no server
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	var err error
	// consul/api's Lock holds a blocking query per held lock (its monitor)
	// besides its calls: at 64 goroutines it passes the agent's default
	// limit of 200 connections per client address, which answers 429.
	cluster, err = testserver.StartConsul(ctx, testserver.ConsulOptions{Servers: *servers,
		Args: []string{"-hcl", "limits { http_max_conns_per_client = 4096 }"}})
	if err == nil {
		addr, err = follower(ctx, cluster)
	}
	cancel()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		if cluster != nil {
			cluster.Stop()
		}
		os.Exit(1)
	}
	what := "a dev agent (Raft log in memory)"
	if *servers > 0 {
		what = fmt.Sprintf("%d server agents", *servers)
	}
	fmt.Printf("consul: %s; every client on the agent %s\n", what, addr)
	code := m.Run()
	cluster.Stop()
	results.Table(os.Stdout, "api-lock", benchcycle.Distinct())
	results.Summary(os.Stdout, "consul-vs-apilock-1", "g1", "lh-client", "api-lock")
	os.Exit(code)
}

// follower returns the address of an agent that does not lead (of a dev
// agent, its own): every implementation talks to it alone.
func follower(ctx context.Context, c *testserver.Consul) (string, error) {
	if len(c.Agents) == 1 {
		return c.Agents[0].Addr(), nil
	}
	l, err := c.Leader(ctx)
	if err != nil {
		return "", err
	}
	return c.Agents[(l+1)%len(c.Agents)].Addr(), nil
}

// BenchmarkCycle measures acquire+release cycles on distinct keys per
// implementation and goroutine count: cycles per second and the p50 and
// p99 latency of a cycle, in rounds (-rounds) that interleave the
// implementations.
func BenchmarkCycle(b *testing.B) {
	results.Run(b, "consul", *rounds, benchcycle.Distinct(), impls(b))
}
