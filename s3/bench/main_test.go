package bench

import (
	"context"
	"fmt"
	"testing"

	"github.com/leasehold-go/leasehold/internal/benchcycle"
	"github.com/leasehold-go/leasehold/internal/testserver"
)

const bucket = "bench"

var (
	gateway *testserver.Versity
	results benchcycle.Results
)

func TestMain(m *testing.M) {
	benchcycle.Main(m, &results, benchcycle.Report{Ref: "raw-sdk", Summary: "s3-vs-sdk-1"}, func(ctx context.Context) (func(), error) {
		var err error
		if gateway, err = testserver.StartVersity(ctx, testserver.VersityOptions{Buckets: []string{bucket}}); err != nil {
			return nil, err
		}
		fmt.Printf("s3: versitygw (posix backend) at %s\n", gateway.Endpoint())
		return gateway.Stop, nil
	})
}

// BenchmarkCycle: conditional-write acquire+release cycles of the SDK
// loop, the store and the Client, on keys of their own (g1, g8, g64).
func BenchmarkCycle(b *testing.B) {
	results.Run(b, "s3", benchcycle.Distinct(), impls(b))
}
