package zookeeper_test

import (
	"context"
	"log"

	"github.com/leasehold-go/leasehold/zookeeper"
)

// Open a ZooKeeper store on an ensemble, keeping its nodes under /locks
// (it needs a server, so this example compiles but does not run).
func ExampleOpenURL() {
	ctx := context.Background()
	store, err := zookeeper.OpenURL(ctx, "zk://127.0.0.1:2181,127.0.0.1:2182,127.0.0.1:2183/locks")
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close()
}
