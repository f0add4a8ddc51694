//go:build !leasehold_no_s3

package storeurl

import (
	"context"
	"net/url"

	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/s3"
)

// s3Row is S3 conditional writes; the build tag leasehold_no_s3 leaves it
// out, with the AWS SDK (s3_leftout.go).
func s3Row() Kind {
	return Kind{
		Name: "s3", Title: "S3", Schemes: []string{"s3"},
		Package: "s3",
		URLs:    []string{"s3://bucket/prefix?endpoint=URL&region=R"},
		Usage: "s3://bucket[/prefix][?endpoint=URL&region=R&access_key=K&secret_key=S]\n" +
			"                        one object per key (credentials also from AWS_ACCESS_KEY_ID...); `leasehold migrate` creates the bucket",
		CheckURL: checkS3, Open: openS3, Migrate: migrateS3,
		FaultBackends: []string{"s3"},
		Servers:       []string{"versitygw"},
		BuildTag:      "leasehold_no_s3",
		Token:         "max(counter + 1, the server's Date in µs), the counter in a never-deleted counter object raised under If-Match before the lease's conditional write",
		Notes:         "conditional writes (If-None-Match, If-Match); the server's clock (Last-Modified, Date) ends a lease; a server that ignores the conditions is refused at open",
	}
}

func checkS3(rawURL string) error { return s3.CheckURL(rawURL) }

func openS3(ctx context.Context, rawURL string, _ *url.URL) (leasehold.Store, error) {
	s, err := s3.OpenURL(ctx, rawURL)
	if err != nil {
		return nil, err // never the typed nil *Store: a non-nil Store with its error
	}
	return s, nil
}

func migrateS3(ctx context.Context, rawURL string) error { return s3.MigrateURL(ctx, rawURL) }
