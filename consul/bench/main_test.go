package bench

import (
	"context"
	"flag"
	"fmt"
	"testing"

	"github.com/leasehold-go/leasehold/internal/benchcycle"
	"github.com/leasehold-go/leasehold/internal/testserver"
)

var servers = flag.Int("servers", 0, "server agents; 0 means one dev agent")

var (
	cluster *testserver.Consul
	addr    string // the agent every implementation talks to
	results benchcycle.Results
)

func TestMain(m *testing.M) {
	benchcycle.Main(m, &results, benchcycle.Report{Ref: "api-lock", Summary: "consul-vs-apilock-1"}, func(ctx context.Context) (func(), error) {
		// consul/api's Lock holds a blocking query per held lock (its
		// monitor) besides its calls: at 64 goroutines it passes the
		// agent's default limit of 200 connections per client address,
		// which answers 429.
		var err error
		cluster, err = testserver.StartConsul(ctx, testserver.ConsulOptions{Servers: *servers,
			Args: []string{"-hcl", "limits { http_max_conns_per_client = 4096 }"}})
		if err != nil {
			return nil, err
		}
		if addr, err = follower(ctx, cluster); err != nil {
			cluster.Stop()
			return nil, err
		}
		what := "a dev agent (Raft log in memory)"
		if *servers > 0 {
			what = fmt.Sprintf("%d server agents", *servers)
		}
		fmt.Printf("consul: %s; every client on the agent %s\n", what, addr)
		return cluster.Stop, nil
	})
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

// BenchmarkCycle: the raw KV floor, consul/api's Lock (with a session of
// its own per lock, or one shared), the store and the Client, each cycling
// on keys of its own.
func BenchmarkCycle(b *testing.B) {
	results.Run(b, "consul", benchcycle.Distinct(), impls(b))
}
