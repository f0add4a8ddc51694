package sqlite

import (
	"context"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/leasehold-go/leasehold"
)

// Each iteration is one acquire plus one release: two write transactions,
// two fsyncs of the WAL (synchronous=FULL). The figures therefore measure
// the disk's fsync as much as the code; compare them as ratios on one
// machine.

func benchStore(b *testing.B) *Store {
	b.Helper()
	s, err := Open(context.Background(), tempDB(b), nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	return s
}

// BenchmarkAcquireRelease: one goroutine, a new key each time or one key.
func BenchmarkAcquireRelease(b *testing.B) {
	for _, hot := range []bool{false, true} {
		name := "distinct_keys"
		if hot {
			name = "hot_key"
		}
		b.Run(name, func(b *testing.B) {
			s := benchStore(b)
			ctx := context.Background()
			owner := leasehold.NewOwnerID()
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				k := "hot"
				if !hot {
					k = "k/" + strconv.Itoa(i)
				}
				g, err := s.Acquire(ctx, leasehold.AcquireRequest{Key: k, Owner: owner, Label: "bench", TTL: time.Minute})
				if err != nil {
					b.Fatal(err)
				}
				if err := s.Release(ctx, g); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkAcquireReleaseParallel: GOMAXPROCS goroutines (times -cpu) on
// one Store. With distinct keys every acquire succeeds; with one hot key
// most get ErrHeld, which is counted and reported as held/op.
func BenchmarkAcquireReleaseParallel(b *testing.B) {
	for _, hot := range []bool{false, true} {
		name := "distinct_keys"
		if hot {
			name = "hot_key"
		}
		b.Run(name, func(b *testing.B) {
			s := benchStore(b)
			var next, held, won atomic.Int64
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				ctx := context.Background()
				owner := leasehold.NewOwnerID()
				for pb.Next() {
					k := "hot"
					if !hot {
						k = "k/" + strconv.FormatInt(next.Add(1), 10)
					}
					g, err := s.Acquire(ctx, leasehold.AcquireRequest{Key: k, Owner: owner, Label: "bench", TTL: time.Minute})
					if err != nil {
						if hot {
							if _, ok := err.(*leasehold.HeldError); ok {
								held.Add(1)
								continue
							}
						}
						b.Error(err)
						return
					}
					won.Add(1)
					if err := s.Release(ctx, g); err != nil {
						b.Error(err)
						return
					}
				}
			})
			b.ReportMetric(float64(held.Load())/float64(b.N), "held/op")
			b.ReportMetric(float64(won.Load())/b.Elapsed().Seconds(), "grants/s")
		})
	}
}

// BenchmarkHolder: a read, no write, no fsync.
func BenchmarkHolder(b *testing.B) {
	s := benchStore(b)
	ctx := context.Background()
	if _, err := s.Acquire(ctx, leasehold.AcquireRequest{Key: "k", Owner: "o", TTL: time.Hour}); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.Holder(ctx, "k"); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRenewMany: renewing 100 leases in one transaction, against
// BenchmarkRenewEach renewing them one by one.
func BenchmarkRenewMany(b *testing.B) {
	s := benchStore(b)
	gs := benchGrants(b, s, 100)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.RenewMany(context.Background(), gs); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkRenewEach(b *testing.B) {
	s := benchStore(b)
	gs := benchGrants(b, s, 100)
	b.ReportAllocs()
	for b.Loop() {
		for _, g := range gs {
			if _, err := s.Renew(context.Background(), g); err != nil {
				b.Fatal(err)
			}
		}
	}
}

func benchGrants(b *testing.B, s *Store, n int) []leasehold.Grant {
	var gs []leasehold.Grant
	for i := 0; i < n; i++ {
		g, err := s.Acquire(context.Background(), leasehold.AcquireRequest{Key: "r/" + strconv.Itoa(i), Owner: "o", TTL: time.Hour})
		if err != nil {
			b.Fatal(err)
		}
		gs = append(gs, g)
	}
	return gs
}
