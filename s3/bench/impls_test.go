package bench

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"
	smithyhttp "github.com/aws/smithy-go/transport/http"
	"github.com/leasehold-go/leasehold/internal/benchcycle"
	"github.com/leasehold-go/leasehold/internal/testserver"
	"github.com/leasehold-go/leasehold/s3"
)

const ttl = 10 * time.Second

// impls returns the implementations, on one S3 client (one HTTP
// transport), closed when b ends.
func impls(b *testing.B) []benchcycle.Impl {
	url := "s3://" + bucket + "/lh?endpoint=" + gateway.Endpoint() + "&region=" + testserver.VersityRegion +
		"&access_key=" + testserver.VersityAccessKey + "&secret_key=" + testserver.VersitySecretKey
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	st, err := s3.OpenURL(ctx, url)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = st.Close() })
	lc := benchcycle.NewClient(b, st)
	return []benchcycle.Impl{
		{Name: "raw-sdk", New: raw(st.Client())},
		{Name: "leasehold", New: benchcycle.Store(st, ttl)},
		{Name: "lh-client", New: benchcycle.Client(lc, ttl)},
	}
}

// raw is the floor, and the loop a user would write with the SDK alone:
// create the key's object if it does not exist (PutObject with
// If-None-Match: *), then delete it. An object in the way (412, or 409 for
// a racing conditional write) is benchcycle.ErrHeld.
func raw(c *awss3.Client) func(*testing.B, string, bool) (benchcycle.Cycle, func()) {
	return func(_ *testing.B, key string, _ bool) (benchcycle.Cycle, func()) {
		name := "peers/" + key
		return func(ctx context.Context) error {
			_, err := c.PutObject(ctx, &awss3.PutObjectInput{Bucket: aws.String(bucket), Key: &name, IfNoneMatch: aws.String("*")})
			if st := status(err); st == http.StatusPreconditionFailed || st == http.StatusConflict {
				return benchcycle.ErrHeld
			}
			if err != nil {
				return err
			}
			_, err = c.DeleteObject(ctx, &awss3.DeleteObjectInput{Bucket: aws.String(bucket), Key: &name})
			return err
		}, nil
	}
}

func status(err error) int {
	var re *smithyhttp.ResponseError
	if errors.As(err, &re) {
		return re.HTTPStatusCode()
	}
	return 0
}
