package dynamodb_test

import (
	"context"
	"log"

	"github.com/leasehold-go/leasehold/dynamodb"
)

// Open a DynamoDB store on a table (it needs a server, so this example
// compiles but does not run). MigrateURL creates the table once (or
// `leasehold migrate --store URL`); skip it when the table exists.
// Credentials come from the SDK's default chain (AWS_ACCESS_KEY_ID,
// AWS_PROFILE, a role), or access_key= and secret_key= in the URL;
// endpoint= names a compatible server, max_skew= trades clock-free expiry
// for a bound on the clients' clock skew.
func ExampleOpenURL() {
	ctx := context.Background()
	const url = "dynamodb://leases?region=eu-west-1"
	// Create the table: idempotent; or `leasehold migrate --store URL`.
	if err := dynamodb.MigrateURL(ctx, url); err != nil {
		log.Fatal(err)
	}
	store, err := dynamodb.OpenURL(ctx, url)
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close()
}
