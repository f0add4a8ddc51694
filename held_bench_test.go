package leasehold_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/memory"
)

// These benchmarks measure what holding many leases costs one client. Each
// does its work once, whatever b.N; run them with -benchtime 1x:
//
//	GOWORK=off go test -run '^$' -bench 'Held' -benchtime 1x .

// heldMem reads the heap in use after a collection and the goroutine stacks.
func heldMem() (heap, stack uint64, goroutines int) {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc, m.StackInuse, runtime.NumGoroutine()
}

// acquireN acquires n keys on c with ttl.
func acquireN(b *testing.B, c *leasehold.Client, n int, ttl time.Duration) []*leasehold.Lease {
	ls := make([]*leasehold.Lease, n)
	for i := range ls {
		l, err := c.Acquire(context.Background(), fmt.Sprintf("held/%06d", i), leasehold.AcquireOptions{TTL: ttl})
		if err != nil {
			b.Fatal(err)
		}
		ls[i] = l
	}
	return ls
}

// BenchmarkHeldLeaseMemory reports, per lease of 10,000 held on the memory
// store, the heap after a collection and the goroutine stacks, for the
// client with its store (B/lease, stack-B/lease) and for the store's grants
// alone (store-B/grant), and the goroutines each lease adds.
func BenchmarkHeldLeaseMemory(b *testing.B) {
	const n = 10000
	ttl := time.Minute
	b.ReportAllocs()
	for range b.N {
		// The store alone: n grants, no client.
		st := memory.New(nil)
		h0, _, _ := heldMem()
		for i := range n {
			req := leasehold.AcquireRequest{Key: fmt.Sprintf("held/%06d", i), Owner: leasehold.NewOwnerID(), TTL: ttl}
			if _, err := st.Acquire(context.Background(), req); err != nil {
				b.Fatal(err)
			}
		}
		h1, _, _ := heldMem()
		runtime.KeepAlive(st)

		c, err := leasehold.New(memory.New(nil), nil)
		if err != nil {
			b.Fatal(err)
		}
		h2, s2, g2 := heldMem()
		ls := acquireN(b, c, n, ttl)
		h3, s3, g3 := heldMem()
		b.ReportMetric(float64(int64(h3)-int64(h2))/n, "B/lease")
		b.ReportMetric(float64(int64(s3)-int64(s2))/n, "stack-B/lease")
		b.ReportMetric(float64(int64(h1)-int64(h0))/n, "store-B/grant")
		b.ReportMetric(float64(g3-g2)/n, "goroutines/lease")
		// For scripts/bench-page's summary table.
		fmt.Printf("SUMMARY held-bytes-per-lease %.0f\n", float64(int64(h3)-int64(h2))/n)
		fmt.Printf("SUMMARY held-goroutines-10k %d\n", g3-g2)
		runtime.KeepAlive(ls)
		if err := c.Close(); err != nil {
			b.Fatal(err)
		}
	}
}

// renewLog records, per key, the gaps between successive renewals.
type renewLog struct {
	*memory.Store
	mu   sync.Mutex
	last map[string]time.Time
	gaps []time.Duration
}

func (r *renewLog) Renew(ctx context.Context, g leasehold.Grant) (leasehold.Grant, error) {
	now := time.Now()
	r.mu.Lock()
	if t, ok := r.last[g.Key]; ok {
		r.gaps = append(r.gaps, now.Sub(t))
	}
	r.last[g.Key] = now
	r.mu.Unlock()
	return r.Store.Renew(ctx, g)
}

// BenchmarkHeldLeasesRenewed holds 100,000 leases on one client over the
// memory store for several TTLs and reports the leases that missed their
// deadline (missed, must be 0), the renewals made, and the renew lag: how
// far the gap between two renewals of one lease ran past the longest
// jittered interval (lag-p50-ms, lag-p99-ms, lag-max-ms; 0 when on time).
func BenchmarkHeldLeasesRenewed(b *testing.B) {
	const n = 100000
	ttl := 6 * time.Second
	hold := 3 * ttl
	for range b.N {
		st := &renewLog{Store: memory.New(nil), last: make(map[string]time.Time)}
		c, err := leasehold.New(st, nil)
		if err != nil {
			b.Fatal(err)
		}
		start := time.Now()
		ls := acquireN(b, c, n, ttl)
		b.Logf("acquired %d leases in %s", n, time.Since(start))
		time.Sleep(hold)
		missed := 0
		for _, l := range ls {
			if err := l.Err(); err != nil {
				missed++
				if missed == 1 {
					b.Logf("first miss: %s: %v", l.Key(), err)
				}
			}
		}
		if err := c.Close(); err != nil && !errors.Is(err, leasehold.ErrLost) {
			b.Fatal(err)
		}
		st.mu.Lock()
		gaps := slices.Clone(st.gaps)
		st.mu.Unlock()
		slices.Sort(gaps)
		maxInterval := time.Duration(float64(ttl) / 3 * 1.1)
		lag := func(q float64) float64 {
			if len(gaps) == 0 {
				return -1
			}
			g := gaps[min(int(q*float64(len(gaps))), len(gaps)-1)]
			return float64(max(g-maxInterval, 0)) / float64(time.Millisecond)
		}
		b.ReportMetric(float64(missed), "missed")
		fmt.Printf("SUMMARY held-100k-missed %d\n", missed) // for scripts/bench-page
		b.ReportMetric(float64(len(gaps)), "renewals")
		b.ReportMetric(lag(0.5), "lag-p50-ms")
		b.ReportMetric(lag(0.99), "lag-p99-ms")
		b.ReportMetric(lag(1), "lag-max-ms")
	}
}

// hangingRenewals is a memory store whose renewals hang until their
// attempt's context ends.
type hangingRenewals struct{ *memory.Store }

func (hangingRenewals) Renew(ctx context.Context, _ leasehold.Grant) (leasehold.Grant, error) {
	<-ctx.Done()
	return leasehold.Grant{}, ctx.Err()
}

// BenchmarkHeldLeaseDeadlinePrecision holds 100 or 10,000 leases whose
// renewals all hang, so every one is lost at its deadline, and reports how
// late after Deadline() its context was seen cancelled (an AfterFunc
// reading the clock): late-p50-ms, late-p99-ms, late-max-ms. With 10,000
// the hung attempts' retries, ever shorter near each deadline, load the
// machine too.
func BenchmarkHeldLeaseDeadlinePrecision(b *testing.B) {
	for _, n := range []int{100, 10000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) { deadlinePrecision(b, n) })
	}
}

func deadlinePrecision(b *testing.B, n int) {
	ttl := 2 * time.Second
	for range b.N {
		c, err := leasehold.New(hangingRenewals{memory.New(nil)}, nil)
		if err != nil {
			b.Fatal(err)
		}
		ls := acquireN(b, c, n, ttl)
		var mu sync.Mutex
		var late []time.Duration
		var wg sync.WaitGroup
		for _, l := range ls {
			wg.Add(1)
			context.AfterFunc(l.Context(), func() {
				d := time.Since(l.Deadline())
				mu.Lock()
				late = append(late, d)
				mu.Unlock()
				wg.Done()
			})
		}
		wg.Wait()
		_ = c.Close()
		slices.Sort(late)
		q := func(f float64) float64 {
			return float64(late[min(int(f*float64(len(late))), len(late)-1)]) / float64(time.Millisecond)
		}
		b.ReportMetric(q(0.5), "late-p50-ms")
		b.ReportMetric(q(0.99), "late-p99-ms")
		b.ReportMetric(q(1), "late-max-ms")
	}
}
