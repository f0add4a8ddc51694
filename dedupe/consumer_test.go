package dedupe_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/dedupe"
	"github.com/leasehold-go/leasehold/fence"
	"github.com/leasehold-go/leasehold/memory"
)

func newConsumer(t *testing.T, s leasehold.Store, r dedupe.Record, opts leasehold.AcquireOptions) *dedupe.Consumer {
	t.Helper()
	c, err := leasehold.New(s, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &dedupe.Consumer{Client: c, Record: r, Lease: opts}
}

func TestHandleProcessesOnceThenDuplicate(t *testing.T) {
	ctx := context.Background()
	var rec dedupe.Memory
	c := newConsumer(t, memory.New(nil), &rec, leasehold.AcquireOptions{TTL: time.Minute})
	runs := 0
	work := func(ctx context.Context, l *leasehold.Lease) error {
		runs++
		if l.Key() != "dedupe/order-1" || l.Token() == 0 {
			t.Errorf("work got lease %q token %d", l.Key(), l.Token())
		}
		return nil
	}
	for i, want := range []dedupe.Result{dedupe.Processed, dedupe.Duplicate, dedupe.Duplicate} {
		res, err := c.Handle(ctx, "order-1", work)
		if res != want || err != nil {
			t.Fatalf("delivery %d: %v, %v; want %v, nil", i+1, res, err, want)
		}
	}
	if runs != 1 {
		t.Fatalf("work ran %d times, want 1", runs)
	}
	// The item's lease was released: the key is free.
	if _, err := c.Client.Store().Holder(ctx, "dedupe/order-1"); !errors.Is(err, leasehold.ErrNotHeld) {
		t.Fatalf("Holder after Handle: %v, want ErrNotHeld", err)
	}
}

// Redeliveries racing each other: the work runs once, the others wait for
// the lease and then find the item done.
func TestHandleConcurrentDeliveriesRunOnce(t *testing.T) {
	var rec dedupe.Memory
	c := newConsumer(t, memory.New(nil), &rec, leasehold.AcquireOptions{TTL: time.Minute, Wait: 10 * time.Second})
	var runs atomic.Int64
	var wg sync.WaitGroup
	results := make(chan dedupe.Result, 16)
	for range 16 {
		wg.Go(func() {
			res, err := c.Handle(context.Background(), "item", func(ctx context.Context, l *leasehold.Lease) error {
				runs.Add(1)
				time.Sleep(20 * time.Millisecond)
				return nil
			})
			if err != nil {
				t.Error(err)
			}
			results <- res
		})
	}
	wg.Wait()
	close(results)
	count := map[dedupe.Result]int{}
	for r := range results {
		count[r]++
	}
	if runs.Load() != 1 || count[dedupe.Processed] != 1 || count[dedupe.Duplicate] != 15 {
		t.Fatalf("work ran %d times; results %v; want 1 run, 1 processed, 15 duplicates", runs.Load(), count)
	}
}

func TestHandleItemHeldElsewhere(t *testing.T) {
	ctx := context.Background()
	var rec dedupe.Memory
	store := memory.New(nil)
	c := newConsumer(t, store, &rec, leasehold.AcquireOptions{TTL: time.Minute})
	other, err := leasehold.New(store, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	l, err := other.Acquire(ctx, "dedupe/busy", leasehold.AcquireOptions{TTL: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	res, err := c.Handle(ctx, "busy", func(context.Context, *leasehold.Lease) error {
		t.Error("work ran while another worker held the item")
		return nil
	})
	if res != dedupe.Failed || !errors.Is(err, leasehold.ErrHeld) {
		t.Fatalf("Handle = %v, %v; want Failed, ErrHeld", res, err)
	}
	if seen, _ := rec.Seen(ctx, "busy"); seen {
		t.Fatal("an item that did not run was marked done")
	}
	_ = l.Release(ctx)
}

func TestHandleWorkErrorLeavesItemUndone(t *testing.T) {
	ctx := context.Background()
	var rec dedupe.Memory
	c := newConsumer(t, memory.New(nil), &rec, leasehold.AcquireOptions{TTL: time.Minute})
	boom := errors.New("boom")
	res, err := c.Handle(ctx, "x", func(context.Context, *leasehold.Lease) error { return boom })
	if res != dedupe.Failed || !errors.Is(err, boom) {
		t.Fatalf("Handle = %v, %v; want Failed, boom", res, err)
	}
	// The redelivery runs it again, and the lease was not leaked.
	res, err = c.Handle(ctx, "x", func(context.Context, *leasehold.Lease) error { return nil })
	if res != dedupe.Processed || err != nil {
		t.Fatalf("redelivery = %v, %v; want Processed", res, err)
	}
}

// failing is a Record whose calls fail on demand.
type failing struct {
	dedupe.Memory
	seenErr, markErr error
}

func (f *failing) Seen(ctx context.Context, id string) (bool, error) {
	if f.seenErr != nil {
		return false, f.seenErr
	}
	return f.Memory.Seen(ctx, id)
}

func (f *failing) Mark(ctx context.Context, id string) (bool, error) {
	if f.markErr != nil {
		return false, f.markErr
	}
	return f.Memory.Mark(ctx, id)
}

func TestHandleRecordFailures(t *testing.T) {
	ctx := context.Background()
	down := errors.New("record down")
	rec := &failing{seenErr: down}
	c := newConsumer(t, memory.New(nil), rec, leasehold.AcquireOptions{TTL: time.Minute})
	ran := false
	res, err := c.Handle(ctx, "x", func(context.Context, *leasehold.Lease) error { ran = true; return nil })
	if res != dedupe.Failed || !errors.Is(err, down) || ran {
		t.Fatalf("Seen failing: %v, %v, ran %v; want Failed, the record's error, no run", res, err, ran)
	}

	rec.seenErr, rec.markErr = nil, down
	res, err = c.Handle(ctx, "x", func(context.Context, *leasehold.Lease) error { ran = true; return nil })
	if res != dedupe.Failed || !errors.Is(err, dedupe.ErrUnmarked) || !errors.Is(err, down) || !ran {
		t.Fatalf("Mark failing: %v, %v, ran %v; want Failed, ErrUnmarked wrapping the record's error", res, err, ran)
	}
	if _, err := c.Client.Store().Holder(ctx, "dedupe/x"); !errors.Is(err, leasehold.ErrNotHeld) {
		t.Fatalf("lease leaked after a failed mark: %v", err)
	}
}

// Work that marks the item itself (in its own transaction) is not an error.
func TestHandleWorkMarksItself(t *testing.T) {
	ctx := context.Background()
	var rec dedupe.Memory
	c := newConsumer(t, memory.New(nil), &rec, leasehold.AcquireOptions{TTL: time.Minute})
	res, err := c.Handle(ctx, "x", func(ctx context.Context, _ *leasehold.Lease) error {
		_, err := rec.Mark(ctx, "x")
		return err
	})
	if res != dedupe.Processed || err != nil {
		t.Fatalf("Handle = %v, %v; want Processed, nil", res, err)
	}
}

func TestHandleBadInput(t *testing.T) {
	ctx := context.Background()
	store := memory.New(nil)
	var rec dedupe.Memory
	c := newConsumer(t, store, &rec, leasehold.AcquireOptions{TTL: time.Minute})
	work := func(context.Context, *leasehold.Lease) error { t.Error("work ran"); return nil }
	if res, err := c.Handle(ctx, "", work); res != dedupe.Failed || !errors.Is(err, dedupe.ErrInvalidID) {
		t.Fatalf("empty id: %v, %v", res, err)
	}
	if _, err := (&dedupe.Consumer{Record: &rec}).Handle(ctx, "x", work); err == nil {
		t.Fatal("a Consumer without a Client did not fail")
	}
	bad := newConsumer(t, store, &rec, leasehold.AcquireOptions{TTL: -time.Second})
	if res, err := bad.Handle(ctx, "x", work); res != dedupe.Failed || !errors.Is(err, leasehold.ErrInvalidTTL) {
		t.Fatalf("negative TTL: %v, %v; want Failed, ErrInvalidTTL", res, err)
	}
	if rec.Len() != 0 {
		t.Fatal("bad input marked something done")
	}
}

// refusing is a memory store that refuses every renewal: a lease on it is
// lost at its first renewal.
type refusing struct{ *memory.Store }

func (refusing) Renew(context.Context, leasehold.Grant) (leasehold.Grant, error) {
	return leasehold.Grant{}, leasehold.ErrNotHeld
}

// Work that succeeds although the lease ended under it is marked done, and
// the loss is reported with the result.
func TestHandleLeaseLostDuringWork(t *testing.T) {
	ctx := context.Background()
	var rec dedupe.Memory
	c := newConsumer(t, refusing{memory.New(nil)}, &rec, leasehold.AcquireOptions{TTL: 300 * time.Millisecond})
	res, err := c.Handle(ctx, "x", func(ctx context.Context, l *leasehold.Lease) error {
		<-ctx.Done()
		return nil
	})
	if res != dedupe.Processed || !errors.Is(err, leasehold.ErrLost) {
		t.Fatalf("Handle = %v, %v; want Processed with ErrLost", res, err)
	}
	if seen, _ := rec.Seen(ctx, "x"); !seen {
		t.Fatal("work that returned nil was not marked done")
	}
}

func TestResultString(t *testing.T) {
	for r, want := range map[dedupe.Result]string{dedupe.Failed: "failed", dedupe.Processed: "processed", dedupe.Duplicate: "duplicate", 7: "Result(7)"} {
		if r.String() != want {
			t.Errorf("%d.String() = %q, want %q", int(r), r.String(), want)
		}
	}
}

// Work that finds the item done in its own transaction says so with
// ErrDuplicate.
func TestHandleWorkReportsDuplicate(t *testing.T) {
	var rec dedupe.Memory
	c := newConsumer(t, memory.New(nil), &rec, leasehold.AcquireOptions{TTL: time.Minute})
	res, err := c.Handle(context.Background(), "x", func(context.Context, *leasehold.Lease) error {
		return fmt.Errorf("rolled back: %w", dedupe.ErrDuplicate)
	})
	if res != dedupe.Duplicate || err != nil {
		t.Fatalf("Handle = %v, %v; want Duplicate, nil", res, err)
	}
}

// The caller's context ending while the work commits does not leave the
// item unmarked: the mark runs on a detached context.
func TestHandleMarksAfterCallerCancelled(t *testing.T) {
	var rec dedupe.Memory
	c := newConsumer(t, memory.New(nil), &rec, leasehold.AcquireOptions{TTL: time.Minute})
	ctx, cancel := context.WithCancel(context.Background())
	res, err := c.Handle(ctx, "x", func(context.Context, *leasehold.Lease) error {
		cancel() // shutdown begins while the effect commits
		return nil
	})
	if res != dedupe.Processed || err != nil {
		t.Fatalf("Handle = %v, %v; want Processed, nil", res, err)
	}
	if seen, _ := rec.Seen(context.Background(), "x"); !seen {
		t.Fatal("the item was not marked done")
	}
}

// An id (or prefix) that cannot make a lease key is refused before any
// lease is taken.
func TestHandleIDThatMakesNoKey(t *testing.T) {
	var rec dedupe.Memory
	c := newConsumer(t, memory.New(nil), &rec, leasehold.AcquireOptions{TTL: time.Minute})
	c.Prefix = strings.Repeat("p", leasehold.MaxKeyLen)
	res, err := c.Handle(context.Background(), "x", func(context.Context, *leasehold.Lease) error { return nil })
	if res != dedupe.Failed || !errors.Is(err, dedupe.ErrInvalidID) || !errors.Is(err, leasehold.ErrInvalidKey) {
		t.Fatalf("Handle with an over-long prefix = %v, %v; want Failed, ErrInvalidID wrapping ErrInvalidKey", res, err)
	}
	c.Prefix = ""
	if res, err := c.Handle(context.Background(), "a\tb", nil); res != dedupe.Failed || !errors.Is(err, dedupe.ErrInvalidID) {
		t.Fatalf("Handle of an id with a tab = %v, %v; want ErrInvalidID", res, err)
	}
}

func TestHandleWorkContextCarriesTheFencingToken(t *testing.T) {
	var rec dedupe.Memory
	c := newConsumer(t, memory.New(nil), &rec, leasehold.AcquireOptions{TTL: time.Minute})
	var got uint64
	var ok bool
	_, err := c.Handle(context.Background(), "order-7", func(ctx context.Context, l *leasehold.Lease) error {
		got, ok = fence.TokenFrom(ctx) // what fence.RoundTripper sends
		if !ok || got != l.Token() {
			t.Errorf("work's context carries token %d, %v; want the lease's %d", got, ok, l.Token())
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// A negative MarkTimeout made the mark fail after the work had run, so a
// redelivery would run the work again; it is refused before any work.
func TestHandleRefusesNegativeMarkTimeout(t *testing.T) {
	var rec dedupe.Memory
	c := newConsumer(t, memory.New(nil), &rec, leasehold.AcquireOptions{TTL: time.Minute})
	c.MarkTimeout = -time.Second
	ran := false
	res, err := c.Handle(context.Background(), "order-1", func(context.Context, *leasehold.Lease) error {
		ran = true
		return nil
	})
	if ran || res != dedupe.Failed || err == nil || !strings.Contains(err.Error(), "MarkTimeout") {
		t.Fatalf("Handle with MarkTimeout -1s: ran %v, %v, %v; want no run, Failed, an error naming MarkTimeout", ran, res, err)
	}
}
