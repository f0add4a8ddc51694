package bench

import (
	"context"
	"fmt"
	"testing"

	"github.com/leasehold-go/leasehold/internal/benchcycle"
	"github.com/leasehold-go/leasehold/internal/testserver"
	"k8s.io/client-go/rest"
)

// namespace holds every implementation's Leases.
const namespace = "bench"

var (
	server  *testserver.Kube
	results benchcycle.Results
)

func TestMain(m *testing.M) {
	report := benchcycle.Report{Ref: "leaderelection", Summary: "kube-vs-leaderelection-1",
		More: []benchcycle.Ratio{{ID: "kube-vs-floor-1", Over: "raw-cas"}}}
	benchcycle.Main(m, &results, report, func(ctx context.Context) (func(), error) {
		var err error
		if server, err = testserver.StartKube(ctx, testserver.KubeOptions{}); err != nil {
			return nil, err
		}
		if err := server.CreateNamespace(ctx, namespace); err != nil {
			server.Stop()
			return nil, err
		}
		fmt.Printf("kube: kube-apiserver at %s (etcd without fsync)\n", server.Endpoint())
		return server.Stop, nil
	})
}

// BenchmarkCycle: acquire+release cycles of the raw client-go loop, the
// store, client-go's leaderelection and the Client, on keys of their own
// (g1, g8, g64).
func BenchmarkCycle(b *testing.B) {
	results.Run(b, "kube", benchcycle.Distinct(), impls(b, func(string) *rest.Config { return config() }))
}
