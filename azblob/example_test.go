package azblob_test

import (
	"context"
	"log"

	"github.com/leasehold-go/leasehold/azblob"
)

// Open an Azure Blob store on container "leases" of storage account
// "myaccount" (it needs a server, so this example compiles but does not
// run). Migrate creates the container once (or `leasehold migrate --store
// URL`); skip it when the container exists. Credentials come from
// azidentity's default chain, or auth=connstr|key|sas with
// $AZURE_STORAGE_CONNECTION_STRING, $AZURE_STORAGE_KEY or
// $AZURE_STORAGE_SAS_TOKEN.
func ExampleOpenURL() {
	ctx := context.Background()
	store, err := azblob.OpenURL(ctx, "azblob://myaccount/leases")
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close()
	// Create the container: idempotent; or `leasehold migrate --store URL`.
	if err := store.Migrate(ctx); err != nil {
		log.Fatal(err)
	}
}
