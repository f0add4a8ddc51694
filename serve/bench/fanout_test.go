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

// fanoutKey is the key BenchmarkFanout's subscribers watch.
const fanoutKey = "fanout/key"

// round is one release of BenchmarkFanout: when each subscriber received
// it (Unix nanoseconds; 0 until then).
type round struct {
	at   []atomic.Int64
	left atomic.Int64
	done chan struct{}
}

func newRound(n int) *round {
	r := &round{at: make([]atomic.Int64, n), done: make(chan struct{})}
	r.left.Store(int64(n))
	return r
}

// receive records subscriber i's receipt at now, the first time only.
func (r *round) receive(i int, now int64) {
	if r.at[i].CompareAndSwap(0, now) && r.left.Add(-1) == 0 {
		close(r.done)
	}
}

// BenchmarkFanout measures a release's delivery to -subscribers (1,000)
// watch streams (server-sent events, mode=notify, each on a connection of
// its own) on one key of a `leasehold serve` process on the embedded
// store: each of b.N rounds acquires the key, then releases it, and takes
// the time from the release's return to each subscriber's receipt (0 for
// a receipt before the release returned). It reports p50, p99 and the
// maximum over all rounds and subscribers. The goal is p99 under 100 ms.
func BenchmarkFanout(b *testing.B) {
	ctx := context.Background()
	srv := startServe(b, "sqlite://"+path(fmt.Sprintf("fanout-%d.db", time.Now().UnixNano())))
	defer srv.stop()
	subs, err := remote.Open(ctx, srv.URL, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer subs.Close()
	holder, err := remote.Open(ctx, srv.URL, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer holder.Close()
	n := *subscribers
	var cur atomic.Pointer[round]
	stop, err := subscribe(ctx, subs.(leasehold.Notifier), n, &cur)
	if err != nil {
		b.Fatal(err)
	}
	defer stop()
	var lat []time.Duration
	b.ResetTimer()
	for range b.N {
		d, err := fanoutRound(ctx, holder, n, &cur)
		if err != nil {
			b.Fatal(err)
		}
		lat = append(lat, d...)
	}
	b.StopTimer()
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	p50, p99, top := quantile(lat, 0.50), quantile(lat, 0.99), quantile(lat, 1)
	b.ReportMetric(ms(p50), "p50-ms")
	b.ReportMetric(ms(p99), "p99-ms")
	b.ReportMetric(ms(top), "max-ms")
	b.ReportMetric(float64(n), "subscribers")
	id := fmt.Sprintf("serve-fanout-%d", n)
	setFigure(id+"-p50-ms", ms(p50))
	setFigure(id+"-p99-ms", ms(p99))
	setFigure(id+"-max-ms", ms(top))
}

// subscribe opens n subscriptions to fanoutKey (16 at a time) and a
// goroutine per subscription that records its receipts in the current
// round. stop ends them all.
func subscribe(ctx context.Context, nf leasehold.Notifier, n int, cur *atomic.Pointer[round]) (stop func(), err error) {
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var stops []func()
	stop = func() {
		cancel()
		wg.Wait()
		for _, s := range stops {
			s()
		}
	}
	var next atomic.Int64
	errs := make([]error, 16)
	var opening sync.WaitGroup
	for w := range errs {
		opening.Add(1)
		go func() {
			defer opening.Done()
			for i := int(next.Add(1) - 1); i < n; i = int(next.Add(1) - 1) {
				ch, unsub, err := nf.Subscribe(ctx, fanoutKey)
				if err != nil {
					errs[w] = fmt.Errorf("subscriber %d of %d: %w", i, n, err)
					return
				}
				mu.Lock()
				stops = append(stops, unsub)
				mu.Unlock()
				wg.Add(1)
				go func() {
					defer wg.Done()
					for {
						select {
						case <-ctx.Done():
							return
						case <-ch:
							if r := cur.Load(); r != nil {
								r.receive(i, time.Now().UnixNano())
							}
						}
					}
				}()
			}
		}()
	}
	opening.Wait()
	if err := errors.Join(errs...); err != nil {
		stop()
		return nil, err
	}
	return stop, nil
}

// fanoutRound acquires fanoutKey, lets the streams quiet down (the last
// round's signals end), releases it, and returns each subscriber's
// delay from the release's return to its receipt.
func fanoutRound(ctx context.Context, st leasehold.Store, n int, cur *atomic.Pointer[round]) ([]time.Duration, error) {
	g, err := st.Acquire(ctx, leasehold.AcquireRequest{Key: fanoutKey, Owner: leasehold.NewOwnerID(), Label: "bench", TTL: time.Minute})
	if err != nil {
		return nil, err
	}
	time.Sleep(50 * time.Millisecond)
	r := newRound(n)
	cur.Store(r)
	defer cur.Store(nil)
	if err := st.Release(ctx, g); err != nil {
		return nil, err
	}
	released := time.Now()
	select {
	case <-r.done:
	case <-time.After(time.Minute):
		return nil, fmt.Errorf("%d of %d subscribers got no signal of the release within a minute", r.left.Load(), n)
	}
	out := make([]time.Duration, n)
	for i := range r.at {
		out[i] = max(0, time.Unix(0, r.at[i].Load()).Sub(released))
	}
	return out, nil
}
