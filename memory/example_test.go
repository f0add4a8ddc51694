package memory_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/memory"
)

// An in-process store, for tests and examples: its leases live as long as
// the process.
func ExampleNew() {
	ctx := context.Background()
	store := memory.New(nil)
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
	fmt.Println("holding", l.Key(), "with token", l.Token())
	// Output: holding reports/nightly with token 1
}
