package rwlock_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/memory"
	"github.com/leasehold-go/leasehold/rwlock"
)

func newLock(t *testing.T, st leasehold.Store, opts *rwlock.Options) *rwlock.Lock {
	t.Helper()
	c, err := leasehold.New(st, &leasehold.Options{TTL: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	l, err := rwlock.New(c, "doc", opts)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func TestReadersShareWriterExcludes(t *testing.T) {
	ctx := context.Background()
	l := newLock(t, memory.New(nil), nil)
	r1, err := l.RLock(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	r2, err := l.RLock(ctx, 0)
	if err != nil {
		t.Fatalf("a second reader was refused: %v", err)
	}
	if r1.Lease().Key() == r2.Lease().Key() {
		t.Fatalf("two readers on one slot %q", r1.Lease().Key())
	}
	if _, err := l.Lock(ctx, 0); !errors.Is(err, leasehold.ErrHeld) || !strings.Contains(err.Error(), "doc/r/") {
		t.Fatalf("a writer while readers hold: %v, want a HeldError naming a reader slot", err)
	}
	for _, r := range []*rwlock.Hold{r1, r2} {
		if err := r.Release(ctx); err != nil {
			t.Fatal(err)
		}
	}
	w, err := l.Lock(ctx, 0)
	if err != nil {
		t.Fatalf("a writer once the readers left: %v", err)
	}
	if s := w.Sequencer(); s.Mode != rwlock.Write || s.Epoch <= r2.Epoch() || s.Token != s.Epoch {
		t.Fatalf("writer's sequencer %v after readers of epoch %d", s, r2.Epoch())
	}
	if _, err := l.RLock(ctx, 0); !errors.Is(err, leasehold.ErrHeld) {
		t.Fatalf("a reader while a writer holds: %v, want ErrHeld", err)
	}
	if _, err := l.Lock(ctx, 0); !errors.Is(err, leasehold.ErrHeld) {
		t.Fatalf("a second writer: %v, want ErrHeld", err)
	}
	if err := w.Release(ctx); err != nil {
		t.Fatal(err)
	}
	r3, err := l.RLock(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	if r3.Epoch() <= w.Epoch() {
		t.Fatalf("a reader after the writer has epoch %d, not above the writer's %d", r3.Epoch(), w.Epoch())
	}
}

// TestWaitingWriterStopsNewReaders: once a writer waits, a new reader is
// refused, the writer gets in when the reader already in leaves, and a
// Guard fed the holds in order accepts every one and refuses the old
// reader's late request.
func TestWaitingWriterStopsNewReaders(t *testing.T) {
	ctx := context.Background()
	st := memory.New(nil)
	l := newLock(t, st, nil)
	r1, err := l.RLock(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan *rwlock.Hold, 1)
	go func() {
		w, err := l.Lock(ctx, leasehold.WaitForever)
		if err != nil {
			t.Error(err)
		}
		got <- w
	}()
	for {
		if _, err := st.Holder(ctx, "doc/w"); err == nil {
			break
		}
		time.Sleep(time.Millisecond)
	}
	if _, err := l.RLock(ctx, 0); !errors.Is(err, leasehold.ErrHeld) {
		t.Fatalf("a new reader while a writer waits: %v, want ErrHeld", err)
	}
	var g rwlock.Guard
	if err := g.Check(r1.Sequencer()); err != nil {
		t.Fatal(err)
	}
	select {
	case <-got:
		t.Fatal("the writer got in while a reader held")
	default:
	}
	if err := r1.Release(ctx); err != nil {
		t.Fatal(err)
	}
	w := <-got
	if w == nil {
		t.FailNow()
	}
	defer w.Release(ctx)
	if err := g.Check(w.Sequencer()); err != nil {
		t.Fatalf("the writer after the reader: %v", err)
	}
	if err := g.Check(r1.Sequencer()); err == nil {
		t.Fatal("the guard accepted the reader after the writer")
	}
}

func TestSlotsBoundReaders(t *testing.T) {
	ctx := context.Background()
	l := newLock(t, memory.New(nil), &rwlock.Options{Readers: 1})
	if _, err := l.RLock(ctx, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := l.RLock(ctx, 0); !errors.Is(err, leasehold.ErrHeld) {
		t.Fatalf("a reader beyond the slots: %v, want ErrHeld", err)
	}
	// The gate is free again: a writer waits for the reader, not the gate.
	if _, err := l.Lock(ctx, 0); !errors.Is(err, leasehold.ErrHeld) || !strings.Contains(err.Error(), "doc/r/0") {
		t.Fatalf("a writer: %v, want a HeldError naming doc/r/0", err)
	}
}

func TestWaitRunsOut(t *testing.T) {
	ctx := context.Background()
	l := newLock(t, memory.New(nil), nil)
	r, err := l.RLock(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Release(ctx)
	if _, err := l.Lock(ctx, 30*time.Millisecond); !errors.Is(err, leasehold.ErrHeld) {
		t.Fatalf("a writer whose wait ran out: %v, want ErrHeld", err)
	}
	if _, err := l.RLock(ctx, 0); err != nil {
		t.Fatalf("the writer that gave up left the gate held: %v", err)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := l.Lock(cctx, leasehold.WaitForever); !errors.Is(err, context.Canceled) {
		t.Fatalf("a writer on a cancelled context: %v", err)
	}
	if _, err := l.RLock(ctx, -1); !errors.Is(err, leasehold.ErrInvalidWait) {
		t.Fatalf("a negative wait: %v", err)
	}
}

func TestNewRefusesBadOptions(t *testing.T) {
	c, err := leasehold.New(memory.New(nil), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	tests := []struct {
		key  string
		opts rwlock.Options
		want error
	}{
		{"k", rwlock.Options{Readers: -1}, rwlock.ErrInvalidOptions},
		{"k", rwlock.Options{Readers: rwlock.MaxReaders + 1}, rwlock.ErrInvalidOptions},
		{"k", rwlock.Options{TTL: -time.Second}, rwlock.ErrInvalidOptions},
		{"", rwlock.Options{}, leasehold.ErrInvalidKey},
		{strings.Repeat("k", 1024), rwlock.Options{}, leasehold.ErrInvalidKey},
		{"k", rwlock.Options{Readers: rwlock.MaxReaders}, nil},
	}
	for _, tc := range tests {
		if _, err := rwlock.New(c, tc.key, &tc.opts); !errors.Is(err, tc.want) && (tc.want != nil || err != nil) {
			t.Errorf("New(%.10q, %+v) = %v, want %v", tc.key, tc.opts, err, tc.want)
		}
	}
}
