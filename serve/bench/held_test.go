package bench

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/remote"
)

// heldTTL is the TTL of the held leases: longer than the benchmark, so
// that nothing renews or expires them meanwhile.
const heldTTL = 30 * time.Minute

// fillers are the concurrent acquirers that take the held leases.
const fillers = 32

// BenchmarkHeld measures the resident memory of a `leasehold serve`
// process while -held leases (100,000) are held through it, on the memory
// store (the server keeps every grant under a handle) and on the embedded
// store (portable grants: the server keeps nothing, the file holds them).
// It reports the process's VmRSS before and with the leases held, its peak
// (VmHWM), its anonymous part (RssAnon: the heap and stacks, without the
// pages of the executable, which the kernel shares and may drop), the
// growth per lease, and the rate at which the leases were taken. The goal
// is at most 100 MiB resident.
//
// Each call fills one new server whatever b.N is: run it with -benchtime
// 1x.
func BenchmarkHeld(b *testing.B) {
	for _, c := range []struct{ name, url string }{
		{"memory", "memory://"},
		{"embedded", "sqlite://"},
	} {
		b.Run(c.name, func(b *testing.B) {
			url := c.url
			if c.name == "embedded" {
				url += path(fmt.Sprintf("held-%d.db", time.Now().UnixNano()))
			}
			heldOnce(b, c.name, url)
		})
	}
}

func heldOnce(b *testing.B, name, storeURL string) {
	ctx := context.Background()
	srv := startServe(b, storeURL)
	defer srv.stop()
	st, err := remote.Open(ctx, srv.URL, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	rss0, _, err := memory(srv.Pid)
	if err != nil {
		b.Fatal(err)
	}
	start := time.Now()
	if err := fill(ctx, st, *heldN); err != nil {
		b.Fatal(err)
	}
	fillTime := time.Since(start)
	if h, err := st.Holder(ctx, fmt.Sprintf("held/%d", *heldN-1)); err != nil || h.Token == 0 {
		b.Fatalf("the last lease is not held through the server: %+v, %v", h, err)
	}
	rss, hwm, err := memory(srv.Pid)
	if err != nil {
		b.Fatal(err)
	}
	anon, err := anonMemory(srv.Pid)
	if err != nil {
		b.Fatal(err)
	}
	mib := func(n int64) float64 { return float64(n) / (1 << 20) }
	b.ReportMetric(mib(rss), "rss-MiB")
	b.ReportMetric(mib(hwm), "peak-MiB")
	b.ReportMetric(mib(anon), "anon-MiB")
	b.ReportMetric(mib(rss0), "idle-MiB")
	b.ReportMetric(float64(rss-rss0)/float64(*heldN), "B/lease")
	b.ReportMetric(float64(*heldN)/fillTime.Seconds(), "acquires/s")
	b.ReportMetric(float64(*heldN), "leases")
	id := fmt.Sprintf("serve-held-%dk-%s", *heldN/1000, name)
	setFigure(id+"-rss-mib", mib(rss))
	setFigure(id+"-anon-mib", mib(anon))
}

// fill acquires held/0 ... held/n-1 through st with fillers at a time.
func fill(ctx context.Context, st leasehold.Store, n int) error {
	var next atomic.Int64
	errs := make([]error, fillers)
	var wg sync.WaitGroup
	for w := range fillers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := next.Add(1) - 1; i < int64(n); i = next.Add(1) - 1 {
				req := leasehold.AcquireRequest{Key: fmt.Sprintf("held/%d", i), Owner: leasehold.NewOwnerID(), Label: "bench", TTL: heldTTL}
				if _, err := st.Acquire(ctx, req); err != nil {
					errs[w] = fmt.Errorf("lease %d of %d: %w", i, n, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}
