package memory_test

import (
	"context"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/memory"
)

// BenchmarkStore measures one store acquire+release cycle on the memory
// store: single goroutine and parallel, distinct keys and one hot key.
func BenchmarkStore(b *testing.B) {
	ctx := context.Background()
	owner := leasehold.NewOwnerID()
	b.Run("distinct/serial", func(b *testing.B) {
		st := memory.New(nil)
		keys := make([]string, 1024)
		for i := range keys {
			keys[i] = "k" + strconv.Itoa(i)
		}
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			g, err := st.Acquire(ctx, leasehold.AcquireRequest{Key: keys[i%len(keys)], Owner: owner, TTL: time.Minute})
			if err != nil {
				b.Fatal(err)
			}
			if err := st.Release(ctx, g); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("distinct/parallel", func(b *testing.B) {
		st := memory.New(nil)
		var n atomic.Int64
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			k := "k" + strconv.FormatInt(n.Add(1), 10)
			for pb.Next() {
				g, err := st.Acquire(ctx, leasehold.AcquireRequest{Key: k, Owner: owner, TTL: time.Minute})
				if err != nil {
					b.Fatal(err)
				}
				_ = st.Release(ctx, g)
			}
		})
	})
	b.Run("hot/parallel", func(b *testing.B) {
		st := memory.New(nil)
		var held atomic.Int64
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				g, err := st.Acquire(ctx, leasehold.AcquireRequest{Key: "hot", Owner: owner, TTL: time.Minute})
				if err != nil {
					continue // held: the attempt is the cycle
				}
				held.Add(1)
				_ = st.Release(ctx, g)
			}
		})
		b.ReportMetric(float64(held.Load())/float64(b.N), "grants/op")
	})
}

// BenchmarkClient measures Client.Acquire + Lease.Release, which adds the
// lease goroutine, context and owner id to the store's cycle.
func BenchmarkClient(b *testing.B) {
	ctx := context.Background()
	b.Run("distinct/serial", func(b *testing.B) {
		c, _ := leasehold.New(memory.New(nil), nil)
		defer c.Close()
		b.ReportAllocs()
		for b.Loop() {
			l, err := c.Acquire(ctx, "k", leasehold.AcquireOptions{TTL: time.Minute})
			if err != nil {
				b.Fatal(err)
			}
			_ = l.Release(ctx)
		}
	})
	b.Run("distinct/parallel", func(b *testing.B) {
		c, _ := leasehold.New(memory.New(nil), nil)
		defer c.Close()
		var n atomic.Int64
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			k := "k" + strconv.FormatInt(n.Add(1), 10)
			for pb.Next() {
				l, err := c.Acquire(ctx, k, leasehold.AcquireOptions{TTL: time.Minute})
				if err != nil {
					b.Fatal(err)
				}
				_ = l.Release(ctx)
			}
		})
	})
}
