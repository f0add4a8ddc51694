package dynamodb_test

import (
	"context"
	"log"

	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/dynamodb"
)

// Open a DynamoDB store on a table and hold a key while doing work (it
// needs a server, so this example compiles but does not run). MigrateURL
// creates the table once (or `leasehold migrate --store URL`); skip it
// when the table exists. Credentials come from the SDK's default chain
// (AWS_ACCESS_KEY_ID, AWS_PROFILE, a role), or access_key= and
// secret_key= in the URL; endpoint= names a compatible server.
func ExampleOpenURL() {
	ctx := context.Background()
	const url = "dynamodb://leases?region=eu-west-1"
	if err := dynamodb.MigrateURL(ctx, url); err != nil {
		log.Fatal(err)
	}
	store, err := dynamodb.OpenURL(ctx, url)
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close()
	c, err := leasehold.New(store, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	err = c.Do(ctx, "reports/daily", leasehold.AcquireOptions{}, func(ctx context.Context, l *leasehold.Lease) error {
		// Pass l.Token() to every write the work makes, as its fence.
		return nil
	})
	if err != nil {
		log.Fatal(err)
	}
}
