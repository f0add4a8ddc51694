package remote_test

import (
	"context"
	"fmt"
	"log"
	"net/http/httptest"
	"time"

	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/memory"
	"github.com/leasehold-go/leasehold/remote"
	"github.com/leasehold-go/leasehold/serve"
)

// A leasehold server in front of a store, and a client that takes its
// leases through it with only the server's URL.
func Example_server() {
	srv := httptest.NewServer(serve.New(memory.New(nil), nil)) // or: leasehold serve --store URL
	defer srv.Close()

	ctx := context.Background()
	store, err := remote.Open(ctx, srv.URL, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close()
	c, err := leasehold.New(store, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	l, err := c.Acquire(ctx, "reports/nightly", leasehold.AcquireOptions{TTL: 15 * time.Second})
	if err != nil {
		log.Fatal(err)
	}
	defer l.Release(ctx)
	fmt.Println("holding", l.Key(), "with token", l.Token(), "from", store.Info().Name)
	// Output: holding reports/nightly with token 1 from remote(memory)
}
