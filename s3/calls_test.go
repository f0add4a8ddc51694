package s3_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/internal/callcount"
	"github.com/leasehold-go/leasehold/internal/testserver"
	"github.com/leasehold-go/leasehold/s3"
)

// countedStore is a store on bucket of v whose requests c counts.
func countedStore(t *testing.T, v *testserver.Versity, bucket string, c *callcount.Counter) *s3.Store {
	t.Helper()
	cl := awss3.New(awss3.Options{
		Region: testserver.VersityRegion, BaseEndpoint: aws.String(v.Endpoint()), UsePathStyle: true,
		Credentials: aws.NewCredentialsCache(aws.CredentialsProviderFunc(func(ctx context.Context) (aws.Credentials, error) {
			return aws.Credentials{AccessKeyID: testserver.VersityAccessKey, SecretAccessKey: testserver.VersitySecretKey}, nil
		})),
		HTTPClient:                 c,
		RequestChecksumCalculation: aws.RequestChecksumCalculationWhenRequired,
		ResponseChecksumValidation: aws.ResponseChecksumValidationWhenRequired,
	})
	s, err := s3.New(ctxT(t), cl, bucket, &s3.Options{Prefix: "calls/"})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// testCalls counts the requests of each call on one key. The first
// acquire reads the lease and counter objects and writes both (4); a
// renewal and a release are one conditional PUT each; an acquire after
// this store's own release is one PUT on the tombstone's ETag, so a cycle
// is 2 requests, as the SDK's bare PutObject+DeleteObject loop. Tokens
// are at least the server's time in µs, so the counter is raised again
// (a GET and a PUT) when the server's Date passes the lease's ceiling: at
// most once per second of the server's clock, so at most 2 + the seconds
// the cycles took (the bound is on the count, not on the time). An
// acquire after another store wrote the lease falls back to a read (3:
// the refused PUT, the read, the PUT; +2 if it raises the counter), and
// its token is still above.
func testCalls(t *testing.T, v *testserver.Versity) {
	c := callcount.New(func(r *http.Request) string { return r.Method + " " + callcount.Segment(r, "keys", "tokens") })
	s := countedStore(t, v, "planted", c)
	c.Take()
	want := func(what string, lo, hi int) { t.Helper(); c.Want(t, what, lo, hi) }
	req := leasehold.AcquireRequest{Key: "calls", Owner: leasehold.NewOwnerID(), Label: "test", TTL: 15 * time.Second}
	g := acquireReq(t, s, req)
	want("first acquire", 4, 4)
	if _, err := s.Renew(ctxT(t), g); err != nil {
		t.Fatal(err)
	}
	want("renew", 1, 1)
	release(t, s, g)
	want("release", 1, 1)
	last, start := g.Token, time.Now()
	for range 50 {
		g = acquireReq(t, s, req)
		release(t, s, g)
		if g.Token <= last {
			t.Fatalf("token %d after %d", g.Token, last)
		}
		last = g.Token
	}
	raises := 2 + int(time.Since(start)/time.Second)
	want("50 acquire+release cycles", 100, 100+2*raises)

	other := countedStore(t, v, "planted", callcount.New(func(*http.Request) string { return "" }))
	g2 := acquireReq(t, other, leasehold.AcquireRequest{Key: "calls", Owner: leasehold.NewOwnerID(), TTL: 15 * time.Second})
	release(t, other, g2)
	c.Take()
	if g = acquireReq(t, s, req); g.Token <= g2.Token {
		t.Fatalf("token %d after another store's %d", g.Token, g2.Token)
	}
	want("acquire after another store's release", 3, 5)
	release(t, s, g)
}

func acquireReq(t testing.TB, s leasehold.Store, req leasehold.AcquireRequest) leasehold.Grant {
	t.Helper()
	g, err := s.Acquire(ctxT(t), req)
	if err != nil {
		t.Fatalf("acquire %s: %v", req.Key, err)
	}
	return g
}
