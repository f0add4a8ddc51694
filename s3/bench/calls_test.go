package bench

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/leasehold-go/leasehold/internal/benchcycle"
	"github.com/leasehold-go/leasehold/internal/testserver"
	"github.com/leasehold-go/leasehold/s3"
)

// counter counts the HTTP requests a client sends, by kind (kindOf).
type counter struct {
	mu sync.Mutex
	n  map[string]int
}

func (c *counter) Do(r *http.Request) (*http.Response, error) {
	c.mu.Lock()
	c.n[kindOf(r)]++
	c.mu.Unlock()
	return http.DefaultClient.Do(r)
}

// take returns the counts since the last take.
func (c *counter) take() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := c.n
	c.n = map[string]int{}
	return n
}

// kindOf names a request by its method and the kind of object it is
// about: "put-keys", "get-tokens", "delete-peers", ...
func kindOf(r *http.Request) string {
	parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	obj := "?"
	for i, p := range parts {
		if i > 0 && (p == "keys" || p == "tokens" || p == "peers" || p == "probe") {
			obj = p
			break
		}
	}
	return strings.ToLower(r.Method) + "-" + obj
}

// BenchmarkCalls counts the requests of 200 x b.N cycles of each
// implementation, one goroutine on a key of its own, after a warm-up cycle
// (the objects exist, released), and reports them per cycle by kind and
// in all (requests/cycle). Calls, unlike times, are deterministic: the
// README's per-call table comes from this.
func BenchmarkCalls(b *testing.B) {
	c := &counter{n: map[string]int{}}
	cl := awss3.New(awss3.Options{
		Region: testserver.VersityRegion, BaseEndpoint: aws.String(gateway.Endpoint()), UsePathStyle: true,
		Credentials:                aws.CredentialsProviderFunc(creds),
		HTTPClient:                 c,
		RequestChecksumCalculation: aws.RequestChecksumCalculationWhenRequired,
		ResponseChecksumValidation: aws.ResponseChecksumValidationWhenRequired,
	})
	ctx := context.Background()
	st, err := s3.New(ctx, cl, bucket, &s3.Options{Prefix: "calls/"})
	if err != nil {
		b.Fatal(err)
	}
	lc := benchcycle.NewClient(b, st)
	for _, im := range []benchcycle.Impl{
		{Name: "raw-sdk", New: raw(cl)},
		{Name: "leasehold", New: benchcycle.Store(st, ttl)},
		{Name: "lh-client", New: benchcycle.Client(lc, ttl)},
	} {
		b.Run(im.Name, func(b *testing.B) {
			cycle, _ := im.New(b, fmt.Sprintf("calls-%d-%s", time.Now().UnixNano(), im.Name), false)
			if err := runCycles(ctx, cycle, 1); err != nil {
				b.Fatal(err)
			}
			c.take()
			n := 200 * b.N
			if err := runCycles(ctx, cycle, n); err != nil {
				b.Fatal(err)
			}
			counts, total := c.take(), 0
			for _, k := range slices.Sorted(maps.Keys(counts)) {
				b.ReportMetric(float64(counts[k])/float64(n), k+"/cycle")
				total += counts[k]
			}
			b.ReportMetric(float64(total)/float64(n), "requests/cycle")
		})
	}
}

func creds(context.Context) (aws.Credentials, error) {
	return aws.Credentials{AccessKeyID: testserver.VersityAccessKey, SecretAccessKey: testserver.VersitySecretKey}, nil
}

// runCycles runs n cycles, each tried again while it returns ErrHeld.
func runCycles(ctx context.Context, c benchcycle.Cycle, n int) error {
	for range n {
		for {
			err := c(ctx)
			if err == nil {
				break
			}
			if !errors.Is(err, benchcycle.ErrHeld) {
				return err
			}
		}
	}
	return nil
}
