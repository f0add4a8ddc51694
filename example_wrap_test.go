package leasehold_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/memory"
)

// attemptCounter is store middleware: it counts acquire attempts and passes
// every call on to the store it embeds.
type attemptCounter struct {
	leasehold.Store
	attempts atomic.Int64
}

func (c *attemptCounter) Acquire(ctx context.Context, req leasehold.AcquireRequest) (leasehold.Grant, error) {
	c.attempts.Add(1)
	return c.Store.Acquire(ctx, req)
}

// Middleware that embeds a Store keeps only the Store methods; WrapStore
// gives the wrapper back exactly the optional capabilities of the store it
// wraps (the memory store is a Notifier and a Lister, not a Waiter).
func ExampleWrapStore() {
	ctx := context.Background()
	inner := memory.New(nil)
	counter := &attemptCounter{Store: inner}
	st := leasehold.WrapStore(inner, counter)

	c, _ := leasehold.New(st, nil)
	defer c.Close()
	l, _ := c.Acquire(ctx, "jobs/a", leasehold.AcquireOptions{TTL: time.Minute})
	defer l.Release(ctx)

	_, notifier := st.(leasehold.Notifier)
	_, waiter := st.(leasehold.Waiter)
	lister, _ := st.(leasehold.Lister)
	fmt.Println("acquire attempts:", counter.attempts.Load())
	fmt.Println("notifier:", notifier, "waiter:", waiter)
	held, _ := lister.List(ctx, "jobs/")
	fmt.Println("listed:", held[0].Key, "token", held[0].Token)
	// Output:
	// acquire attempts: 1
	// notifier: true waiter: false
	// listed: jobs/a token 1
}
