package bench

import (
	"context"
	"fmt"
	"testing"

	"github.com/leasehold-go/leasehold/internal/benchcycle"
	"github.com/leasehold-go/leasehold/internal/testserver"
)

var (
	azurite *testserver.Azurite
	results benchcycle.Results
)

func TestMain(m *testing.M) {
	benchcycle.Main(m, &results, benchcycle.Report{Ref: "raw-sdk", Summary: "azblob-vs-sdk-1"}, func(ctx context.Context) (func(), error) {
		var err error
		if azurite, err = testserver.StartAzurite(ctx, testserver.AzuriteOptions{}); err != nil {
			return nil, err
		}
		fmt.Printf("azblob: Azurite (in memory) at %s\n", azurite.BlobEndpoint())
		return azurite.Stop, nil
	})
}

// BenchmarkCycle: blob-lease acquire+release cycles of the SDK loop, the
// store and the Client, on distinct keys at 1, 8 and 64 goroutines.
func BenchmarkCycle(b *testing.B) {
	results.Run(b, "azblob", benchcycle.Distinct(), impls(b))
}
