package leasehold_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/memory"
)

// gatedBatch is a batch-renewing memory store whose RenewMany waits for the
// test to let it go once gate is set, and reports that it started.
type gatedBatch struct {
	*batching
	gate    chan struct{} // nil: no wait
	started chan struct{}
}

func (g *gatedBatch) RenewMany(ctx context.Context, gs []leasehold.Grant) ([]leasehold.RenewResult, error) {
	if g.gate != nil {
		select {
		case g.started <- struct{}{}:
		default:
		}
		<-g.gate
	}
	return g.batching.RenewMany(ctx, gs)
}

// A client keeps a batch group across the leases of one TTL. A lease that
// joins the group while the group's batch for a lease that has left is
// still in flight is renewed by the group from then on, and leases of more
// TTLs than the client keeps idle groups for are renewed too.
func TestBatchGroupRejoinedWhileItsBatchIsInFlight(t *testing.T) {
	st := &gatedBatch{batching: &batching{Store: memory.New(nil)}, gate: make(chan struct{}), started: make(chan struct{}, 1)}
	c := newClient(t, st, nil)
	ctx := context.Background()
	ttl := 600 * time.Millisecond
	a, err := c.Acquire(ctx, "a", leasehold.AcquireOptions{TTL: ttl})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-st.started:
	case <-time.After(5 * time.Second):
		t.Fatal("no batch renewal started within 5 s")
	}
	if err := a.Release(ctx); err != nil { // the group empties with its batch in flight
		t.Fatal(err)
	}
	b, err := c.Acquire(ctx, "b", leasehold.AcquireOptions{TTL: ttl})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Release(ctx)
	before := st.batches.Load()
	close(st.gate) // the batch in flight ends; batches go on for b
	time.Sleep(3 * ttl)
	if err := b.Err(); err != nil {
		t.Fatalf("the lease that rejoined the group ended: %v", err)
	}
	if n := st.singles.Load(); n != 0 {
		t.Errorf("%d single renewals, want 0: the group renews its members", n)
	}
	if n := st.batches.Load() - before; n < 3 {
		t.Errorf("%d batches in 3 TTLs after the rejoin, want at least 3 (one per third of the TTL)", n)
	}

	// More TTLs than idle groups are kept for: each acquired and released,
	// then each acquired again and held through renewals.
	var ls []*leasehold.Lease
	for round := range 2 {
		for i := range 8 {
			l, err := c.Acquire(ctx, fmt.Sprintf("t%d", i), leasehold.AcquireOptions{TTL: ttl + time.Duration(i)*50*time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			if round == 0 {
				if err := l.Release(ctx); err != nil {
					t.Fatal(err)
				}
				continue
			}
			ls = append(ls, l)
		}
	}
	time.Sleep(3 * ttl)
	for _, l := range ls {
		if err := l.Err(); err != nil {
			t.Errorf("lease %s (TTL %s) ended: %v", l.Key(), l.TTL(), err)
		}
		_ = l.Release(ctx)
	}
	if n := st.singles.Load(); n != 0 {
		t.Errorf("%d single renewals, want 0", n)
	}
}
