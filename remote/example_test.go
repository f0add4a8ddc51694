package remote_test

import (
	"context"
	"log"

	"github.com/leasehold-go/leasehold/remote"
)

// Open a leasehold server (leasehold serve) as a store: the client needs
// the server's URL, not the credentials of the store behind it.
func ExampleOpen() {
	ctx := context.Background()
	store, err := remote.Open(ctx, "https://leases.internal:7443", nil)
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close()
}
