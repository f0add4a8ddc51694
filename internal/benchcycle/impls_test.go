package benchcycle

import (
	"context"
	"errors"
	"flag"
	"sync/atomic"
	"testing"
	"time"

	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/memory"
)

// TestStore: the store's cycle acquires and releases; a key another owner
// holds is ErrHeld (which Drive retries), not a failure.
func TestStore(t *testing.T) {
	ctx := t.Context()
	st := memory.New(nil)
	c, _ := Store(st, time.Minute)(nil, "k", false)
	if err := c(ctx); err != nil {
		t.Fatalf("cycle: %v", err)
	}
	g, err := st.Acquire(ctx, leasehold.AcquireRequest{Key: "k", Owner: leasehold.NewOwnerID(), TTL: time.Minute})
	if err != nil {
		t.Fatalf("the cycle left the key held: %v", err)
	}
	if err := c(ctx); !errors.Is(err, ErrHeld) {
		t.Errorf("cycle on a held key: %v, want ErrHeld", err)
	}
	if err := st.Release(ctx, g); err != nil {
		t.Fatal(err)
	}
	if err := c(ctx); err != nil {
		t.Errorf("cycle after the holder released: %v", err)
	}
}

// TestClient: the client's cycle acquires and releases the lease.
func TestClient(t *testing.T) {
	ctx := t.Context()
	st := memory.New(nil)
	lc, err := leasehold.New(st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer lc.Close()
	c, _ := Client(lc, time.Minute)(nil, "k", true)
	for range 3 {
		if err := c(ctx); err != nil {
			t.Fatalf("cycle: %v", err)
		}
	}
	if _, err := st.Acquire(ctx, leasehold.AcquireRequest{Key: "k", Owner: leasehold.NewOwnerID(), TTL: time.Minute}); err != nil {
		t.Errorf("the cycle left the key held: %v", err)
	}
}

// TestDrive: every cycle runs (a warm-up each, then b.N in all), one that
// returns ErrHeld is tried again, and the rate and percentiles are
// reported.
func TestDrive(t *testing.T) {
	var calls, held atomic.Int64
	c := func(context.Context) error {
		if calls.Add(1)%3 == 0 {
			held.Add(1)
			return ErrHeld
		}
		return nil
	}
	bt := flag.Lookup("test.benchtime")
	old := bt.Value.String()
	if err := bt.Value.Set("100x"); err != nil { // not a second of spinning
		t.Fatal(err)
	}
	defer func() { _ = bt.Value.Set(old) }()
	var n int
	res := testing.Benchmark(func(b *testing.B) {
		calls.Store(0)
		held.Store(0)
		n = b.N
		Drive(b, "test", []Cycle{c, c})
	})
	if got, want := calls.Load()-held.Load(), int64(n+2); got != want {
		t.Errorf("%d cycles succeeded, want b.N + 2 warm-ups = %d", got, want)
	}
	for _, m := range []string{"cycles/s", "p50-ms", "p99-ms"} {
		if _, ok := res.Extra[m]; !ok {
			t.Errorf("no %s reported: %v", m, res.Extra)
		}
	}
	if res.Extra["cycles/s"] <= 0 {
		t.Errorf("cycles/s = %v", res.Extra["cycles/s"])
	}
}
