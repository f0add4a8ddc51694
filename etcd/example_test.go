package etcd_test

import (
	"context"
	"log"

	"github.com/leasehold-go/leasehold/etcd"
)

// Open an etcd store on a cluster (it needs a server, so this example
// compiles but does not run).
func ExampleOpenURL() {
	ctx := context.Background()
	store, err := etcd.OpenURL(ctx, "etcd://127.0.0.1:2379,127.0.0.1:22379,127.0.0.1:32379")
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close()
}
