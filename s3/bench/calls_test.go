package bench

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/leasehold-go/leasehold/internal/benchcycle"
	"github.com/leasehold-go/leasehold/internal/callcount"
	"github.com/leasehold-go/leasehold/internal/testserver"
	"github.com/leasehold-go/leasehold/s3"
)

// kindOf names a request by its method and the kind of object it is
// about: "put-keys", "get-tokens", "delete-peers", ...
func kindOf(r *http.Request) string {
	return strings.ToLower(r.Method) + "-" + callcount.Segment(r, "keys", "tokens", "peers", "probe")
}

// BenchmarkCalls counts the requests per cycle of the SDK loop, the store
// and the Client (benchcycle.Calls): the README's per-call table.
func BenchmarkCalls(b *testing.B) {
	c := callcount.New(kindOf)
	cl := awss3.New(awss3.Options{
		Region: testserver.VersityRegion, BaseEndpoint: aws.String(gateway.Endpoint()), UsePathStyle: true,
		Credentials: aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
			return aws.Credentials{AccessKeyID: testserver.VersityAccessKey, SecretAccessKey: testserver.VersitySecretKey}, nil
		}),
		HTTPClient:                 c,
		RequestChecksumCalculation: aws.RequestChecksumCalculationWhenRequired,
		ResponseChecksumValidation: aws.ResponseChecksumValidationWhenRequired,
	})
	st, err := s3.New(context.Background(), cl, bucket, &s3.Options{Prefix: "calls/"})
	if err != nil {
		b.Fatal(err)
	}
	benchcycle.Calls(b, c, []benchcycle.Impl{
		{Name: "raw-sdk", New: raw(cl)},
		{Name: "leasehold", New: benchcycle.Store(st, ttl)},
		{Name: "lh-client", New: benchcycle.Client(benchcycle.NewClient(b, st), ttl)},
	})
}
