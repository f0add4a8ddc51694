package leasehold_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/memory"
)

// BenchmarkCycle measures one acquire+release cycle on the memory store,
// through the store alone and through a Client, one goroutine, on 256
// keys in turn: the difference is the Client's own work per cycle (its
// deadline and renewal on the scheduler, the lease's context, the
// release's timeout). Compare allocs/op and B/op, which the machine's load
// does not move:
//
//	GOWORK=off go test -run '^$' -bench 'Cycle' -benchmem .
func BenchmarkCycle(b *testing.B) {
	ctx := context.Background()
	keys := make([]string, 256)
	for i := range keys {
		keys[i] = "cycle/" + strconv.Itoa(i)
	}
	b.Run("store", func(b *testing.B) {
		st := memory.New(nil)
		defer st.Close()
		b.ReportAllocs()
		for i := range b.N {
			g, err := st.Acquire(ctx, leasehold.AcquireRequest{Key: keys[i%256], Owner: leasehold.NewOwnerID(), TTL: time.Minute})
			if err != nil {
				b.Fatal(err)
			}
			if err := st.Release(ctx, g); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("client", func(b *testing.B) {
		c, err := leasehold.New(memory.New(nil), nil)
		if err != nil {
			b.Fatal(err)
		}
		defer c.Close()
		b.ReportAllocs()
		for i := range b.N {
			l, err := c.Acquire(ctx, keys[i%256], leasehold.AcquireOptions{TTL: time.Minute})
			if err != nil {
				b.Fatal(err)
			}
			if err := l.Release(ctx); err != nil {
				b.Fatal(err)
			}
		}
	})
}
