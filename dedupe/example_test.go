package dedupe_test

import (
	"context"
	"fmt"
	"time"

	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/dedupe"
	"github.com/leasehold-go/leasehold/memory"
)

// A queue redelivers a message; the consumer does its work once and
// acknowledges the duplicate.
func ExampleConsumer_Handle() {
	client, _ := leasehold.New(memory.New(nil), nil)
	defer client.Close()
	c := &dedupe.Consumer{
		Client: client,
		Record: &dedupe.Memory{},
		Lease:  leasehold.AcquireOptions{TTL: 30 * time.Second},
	}
	for _, msg := range []string{"order-7", "order-8", "order-7"} {
		res, err := c.Handle(context.Background(), msg, func(ctx context.Context, l *leasehold.Lease) error {
			fmt.Printf("shipping %s under token %d\n", msg, l.Token())
			return nil
		})
		fmt.Println(msg, res, err)
	}
	// Output:
	// shipping order-7 under token 1
	// order-7 processed <nil>
	// shipping order-8 under token 1
	// order-8 processed <nil>
	// order-7 duplicate <nil>
}
