package semaphore_test

import (
	"context"
	"testing"

	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/memory"
	"github.com/leasehold-go/leasehold/semaphore"
)

// BenchmarkCycle compares a semaphore's Acquire+Release (10 slots, none
// held; and 9 held by another client) with a plain lease cycle on the
// memory store, where the client's own work is all there is: run with
// -benchmem for the allocations. The stores' figures are `leasehold bench
// --prims`.
func BenchmarkCycle(b *testing.B) {
	ctx := context.Background()
	st := memory.New(nil)
	c, err := leasehold.New(st, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	other, err := leasehold.New(st, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer other.Close()
	for i := range 9 {
		if _, err := other.Acquire(ctx, semaphore.SlotKey("busy", i), leasehold.AcquireOptions{}); err != nil {
			b.Fatal(err)
		}
	}
	s, err := semaphore.New(c, 10, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("plain", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			l, err := c.Acquire(ctx, "plain", leasehold.AcquireOptions{})
			if err != nil {
				b.Fatal(err)
			}
			_ = l.Release(ctx)
		}
	})
	for _, key := range []string{"free", "busy"} {
		b.Run("semaphore-"+key, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				p, err := s.Acquire(ctx, key, leasehold.AcquireOptions{})
				if err != nil {
					b.Fatal(err)
				}
				_ = p.Release(ctx)
			}
		})
	}
}
