//go:build go1.26

// The runtime counts the goroutines it created (the metric
// /sched/goroutines-created:goroutines) from Go 1.26 on; this module allows
// Go 1.25, whose runtime has no such metric, so the test is built on 1.26 and
// later only.

package leasehold_test

import (
	"context"
	"runtime/metrics"
	"testing"
	"time"

	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/memory"
)

// batchMemory is a memory store that also renews in batches, as Redis does.
type batchMemory struct{ *memory.Store }

func (b batchMemory) RenewMany(ctx context.Context, gs []leasehold.Grant) ([]leasehold.RenewResult, error) {
	out := make([]leasehold.RenewResult, len(gs))
	for i, g := range gs {
		out[i].Grant, out[i].Err = b.Renew(ctx, g)
	}
	return out, nil
}

// A client that acquires and releases in a loop keeps its scheduler's
// goroutine: it neither starts one per lease nor (through the renewals'
// jitter) has to wake it per lease; nor does it start a Lost watch per
// lease when the grants share a Lost channel (an etcd session's). Counted
// with the runtime's count of goroutines created, not timed.
func TestAcquireReleaseLoopStartsNoGoroutineEach(t *testing.T) {
	lost := &lostChans{Store: memory.New(nil), chans: map[string]chan struct{}{"k": make(chan struct{})}}
	for _, st := range []leasehold.Store{memory.New(nil), batchMemory{memory.New(nil)}, lost} {
		c := newClient(t, st, nil)
		s := []metrics.Sample{{Name: "/sched/goroutines-created:goroutines"}}
		metrics.Read(s)
		before := s[0].Value.Uint64()
		const n = 2000
		for range n {
			l, err := c.Acquire(context.Background(), "k", leasehold.AcquireOptions{TTL: time.Minute})
			if err != nil {
				t.Fatal(err)
			}
			if err := l.Release(context.Background()); err != nil {
				t.Fatal(err)
			}
		}
		metrics.Read(s)
		if created := s[0].Value.Uint64() - before; created > n/100 {
			t.Errorf("%T: %d acquire+release cycles created %d goroutines, want a handful", st, n, created)
		}
	}
}
