package sessionpool

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"
)

var errDown = errors.New("server down")

func TestSetUpFails(t *testing.T) {
	var made atomic.Int32
	fail := true
	p := newPool(func(context.Context, *fake) error {
		if fail {
			return errDown
		}
		return nil
	}, &made)
	if _, err := p.Use(context.Background(), time.Second); !errors.Is(err, errDown) {
		t.Fatalf("err = %v, want %v", err, errDown)
	}
	if n := len(p.All()); n != 0 {
		t.Fatalf("%d sessions in the pool after a failed set-up, want 0", n)
	}
	fail = false
	ss, err := p.Use(context.Background(), time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if n := made.Load(); n != 2 {
		t.Errorf("%d sessions made, want 2", n)
	}
	ran := false
	if !p.WhileOpen(func() { ran = true }) || !ran {
		t.Error("WhileOpen did not run on an open pool")
	}
	if got, ok := p.Find(func(f *fake) bool { return f.class == time.Second }); !ok || got != ss {
		t.Errorf("Find = %p, %v; want %p, true", got, ok, ss)
	}
}

// race is a creator and a waiter on one class: the creator's set-up waits
// for release (then returns what it is given) or for its context.
type race struct {
	p        *Pool[*fake]
	made     atomic.Int32
	first    *fake
	release  chan error
	creator  chan error
	waiter   chan error
	cancelC  context.CancelFunc
	cancelW  context.CancelFunc
	waiterSS chan *fake
}

// startRace starts a race's creator, then its waiter once the creator's
// session is in the pool, and returns when the waiter holds a reference
// on it. The results arrive on creator and waiter once the caller acts.
func startRace(t *testing.T) *race {
	r := &race{release: make(chan error), creator: make(chan error, 1), waiter: make(chan error, 1), waiterSS: make(chan *fake, 1)}
	inSetUp := make(chan *fake, 1)
	r.p = newPool(func(ctx context.Context, f *fake) error {
		if r.made.Load() > 1 {
			return nil // a later session sets up at once
		}
		inSetUp <- f
		select {
		case err := <-r.release:
			return err
		case <-ctx.Done():
			return ctx.Err()
		}
	}, &r.made)
	cctx, cancelC := context.WithCancel(context.Background())
	wctx, cancelW := context.WithCancel(context.Background())
	r.cancelC, r.cancelW = cancelC, cancelW
	t.Cleanup(func() { cancelC(); cancelW() })
	go func() {
		_, err := r.p.Use(cctx, time.Second)
		r.creator <- err
	}()
	r.first = <-inSetUp
	go func() {
		ss, err := r.p.Use(wctx, time.Second)
		r.waiterSS <- ss
		r.waiter <- err
	}()
	<-r.first.held // the waiter holds a reference: it waits for the set-up
	return r
}

func TestWaiterRetriesWhenCreatorCancelled(t *testing.T) {
	r := startRace(t)
	r.cancelC()
	if err := <-r.creator; !errors.Is(err, context.Canceled) {
		t.Fatalf("creator: err = %v, want context.Canceled", err)
	}
	ss := <-r.waiterSS
	if err := <-r.waiter; err != nil {
		t.Fatalf("waiter: err = %v, want a new session", err)
	}
	if ss == r.first || r.made.Load() != 2 {
		t.Errorf("waiter got session %p (first %p), %d made; want a second session", ss, r.first, r.made.Load())
	}
	if n := r.first.refCount(); n != 0 {
		t.Errorf("first session has %d references, want 0", n)
	}
}

func TestWaiterKeepsOtherErrors(t *testing.T) {
	r := startRace(t)
	r.release <- errDown
	for _, got := range []error{<-r.creator, <-r.waiter} {
		if !errors.Is(got, errDown) {
			t.Errorf("err = %v, want %v", got, errDown)
		}
	}
	if n := r.made.Load(); n != 1 {
		t.Errorf("%d sessions made, want 1 (no retry)", n)
	}
	if n := r.first.refCount(); n != 0 {
		t.Errorf("first session has %d references, want 0", n)
	}
}

func TestWaiterContextEnds(t *testing.T) {
	r := startRace(t)
	r.cancelW()
	if err := <-r.waiter; !errors.Is(err, context.Canceled) {
		t.Fatalf("waiter: err = %v, want context.Canceled", err)
	}
	if n := r.first.refCount(); n != 1 {
		t.Errorf("first session has %d references after the waiter left, want 1 (the creator's)", n)
	}
	r.release <- nil
	if err := <-r.creator; err != nil {
		t.Fatalf("creator: %v", err)
	}
	if n := r.first.refCount(); n != 1 {
		t.Errorf("first session has %d references, want 1", n)
	}
}
