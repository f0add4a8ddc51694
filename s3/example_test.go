package s3_test

import (
	"context"
	"log"

	"github.com/leasehold-go/leasehold/s3"
)

// Open an S3 store on a bucket, its objects under leases/ (it needs a
// server, so this example compiles but does not run). MigrateURL creates
// the bucket once (or `leasehold migrate --store URL`); skip it when the
// bucket exists. Credentials come from the SDK's default chain
// (AWS_ACCESS_KEY_ID, AWS_PROFILE, a role), or access_key= and secret_key=
// in the URL; endpoint= names an S3-compatible server.
func ExampleOpenURL() {
	ctx := context.Background()
	const url = "s3://my-bucket/leases?region=eu-west-1"
	// Create the bucket: idempotent; or `leasehold migrate --store URL`.
	if err := s3.MigrateURL(ctx, url); err != nil {
		log.Fatal(err)
	}
	store, err := s3.OpenURL(ctx, url)
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close()
}
