package bench

import (
	"context"
	"fmt"
	"testing"

	"github.com/leasehold-go/leasehold/internal/benchcycle"
	"github.com/leasehold-go/leasehold/internal/testserver"
)

const table = "bench"

var (
	server  *testserver.Dynalite
	results benchcycle.Results
)

func TestMain(m *testing.M) {
	benchcycle.Main(m, &results, benchcycle.Report{Ref: "raw-sdk", Summary: "dynamodb-vs-sdk-1"}, func(ctx context.Context) (func(), error) {
		var err error
		if server, err = testserver.StartDynalite(ctx, testserver.DynaliteOptions{}); err != nil {
			return nil, err
		}
		if err := server.CreateTable(ctx, table); err != nil {
			server.Stop()
			return nil, err
		}
		fmt.Printf("dynamodb: dynalite (in memory) at %s\n", server.Endpoint())
		return server.Stop, nil
	})
}

// BenchmarkCycle: conditional-write acquire+release cycles of the SDK
// loop, the store and the Client, on keys of their own (g1, g8, g64).
func BenchmarkCycle(b *testing.B) {
	results.Run(b, "dynamodb", benchcycle.Distinct(), impls(b))
}
