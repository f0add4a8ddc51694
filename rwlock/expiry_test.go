package rwlock_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/fence"
	"github.com/leasehold-go/leasehold/memory"
	"github.com/leasehold-go/leasehold/rwlock"
)

// hung is a store whose renewals hang until their context ends: a holder
// paused, as far as the store can tell.
type hung struct{ leasehold.Store }

func (hung) Renew(ctx context.Context, _ leasehold.Grant) (leasehold.Grant, error) {
	<-ctx.Done()
	return leasehold.Grant{}, ctx.Err()
}

// A reader whose slot lease expires mid-hold: its hold's context ends with
// ErrExpired, a waiting writer then gets in, and the resource's Guard
// refuses the old reader's late request.
func TestReaderExpiresMidHold(t *testing.T) {
	ctx := context.Background()
	st := memory.New(nil)
	pc, err := leasehold.New(hung{st.Reopen()}, &leasehold.Options{TTL: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	pl, err := rwlock.New(pc, "doc", nil)
	if err != nil {
		t.Fatal(err)
	}
	r, err := pl.RLock(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	var g rwlock.Guard
	if err := g.Check(r.Sequencer()); err != nil {
		t.Fatal(err)
	}
	w, err := newLock(t, st, nil).Lock(ctx, 10*time.Second)
	if err != nil {
		t.Fatalf("the writer behind an expiring reader: %v", err)
	}
	defer w.Release(ctx)
	<-r.Done() // ended by the reader's own deadline, before the store's expiry let the writer in
	if !errors.Is(r.Err(), leasehold.ErrExpired) {
		t.Fatalf("the reader's hold ended with %v, want ErrExpired", r.Err())
	}
	if err := g.Check(w.Sequencer()); err != nil {
		t.Fatal(err)
	}
	if err := g.Check(r.Sequencer()); !errors.Is(err, fence.ErrStale) {
		t.Fatalf("the expired reader's late request: %v, want fence.ErrStale", err)
	}
	if err := r.Release(ctx); !errors.Is(err, leasehold.ErrLost) {
		t.Fatalf("releasing the expired hold: %v, want ErrLost", err)
	}
}
