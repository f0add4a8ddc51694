package leasehold_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/memory"
)

// Do acquires a lease, runs the work under the lease's context and releases
// it on every path.
func ExampleClient_Do() {
	c, _ := leasehold.New(memory.New(nil), nil)
	defer c.Close()

	err := c.Do(context.Background(), "reports/nightly", leasehold.AcquireOptions{TTL: 10 * time.Second},
		func(ctx context.Context, l *leasehold.Lease) error {
			fmt.Println("running with token", l.Token())
			return nil
		})
	fmt.Println("err:", err)
	// Output:
	// running with token 1
	// err: <nil>
}

// A second owner is told who holds the key, with which token, and for how
// long.
func ExampleHeldError() {
	c, _ := leasehold.New(memory.New(nil), &leasehold.Options{Label: "worker-1"})
	defer c.Close()
	l, _ := c.Acquire(context.Background(), "queue/item-42", leasehold.AcquireOptions{TTL: time.Minute})
	defer l.Release(context.Background())

	_, err := c.Acquire(context.Background(), "queue/item-42", leasehold.AcquireOptions{TTL: time.Minute})
	var held *leasehold.HeldError
	if errors.As(err, &held) {
		fmt.Println("held by", held.Label, "with token", held.Token)
	}
	// Output: held by worker-1 with token 1
}

// Checkpoint before each side effect: it fails once the lease is lost, or
// when less time is left than the step needs.
func ExampleLease_Checkpoint() {
	c, _ := leasehold.New(memory.New(nil), nil)
	defer c.Close()
	l, _ := c.Acquire(context.Background(), "migrations", leasehold.AcquireOptions{TTL: 5 * time.Second})

	fmt.Println(l.Checkpoint(time.Second))
	fmt.Println(errors.Is(l.Checkpoint(time.Minute), leasehold.ErrInsufficientTime))
	_ = l.Release(context.Background())
	fmt.Println(l.Checkpoint(time.Second))
	// Output:
	// <nil>
	// true
	// leasehold: lease released
}

// Tokens grow with every grant, across release and expiry.
func ExampleGrant_Token() {
	st := memory.New(nil)
	c, _ := leasehold.New(st, nil)
	defer c.Close()
	for i := 0; i < 3; i++ {
		l, _ := c.Acquire(context.Background(), "k", leasehold.AcquireOptions{TTL: time.Second})
		fmt.Println(l.Token())
		_ = l.Release(context.Background())
	}
	// Output:
	// 1
	// 2
	// 3
}
