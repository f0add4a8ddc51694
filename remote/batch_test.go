package remote_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/internal/servetest"
	"github.com/leasehold-go/leasehold/internal/wire"
	"github.com/leasehold-go/leasehold/memory"
)

// TestRenewMany: the remote store is a leasehold.BatchRenewer over any
// backend; more grants than one request takes are sent in several; each
// grant gets its own result: renewed, not held (a wrong token, a grant
// released meanwhile), or refused by the checks before it is sent.
func TestRenewMany(t *testing.T) {
	st := servetest.Start(t, memory.New(nil)).Open(t)
	br, ok := st.(leasehold.BatchRenewer)
	if !ok {
		t.Fatalf("%T is not a leasehold.BatchRenewer", st)
	}
	ctx := context.Background()
	n := 2*wire.MaxBatch + 3
	gs := make([]leasehold.Grant, n)
	for i := range gs {
		g, err := st.Acquire(ctx, acquireReq(fmt.Sprintf("k%d", i)))
		if err != nil {
			t.Fatal(err)
		}
		gs[i] = g
	}
	gs[1].Token++ // not the holder's token
	if err := st.Release(ctx, gs[wire.MaxBatch+1]); err != nil {
		t.Fatal(err)
	}
	gs[n-1].TTL = 0 // refused by the checks
	res, err := br.RenewMany(ctx, gs)
	if err != nil || len(res) != n {
		t.Fatalf("RenewMany: %d results, %v", len(res), err)
	}
	for i, r := range res {
		switch i {
		case 1, wire.MaxBatch + 1:
			if !errors.Is(r.Err, leasehold.ErrNotHeld) {
				t.Errorf("grant %d: %v, want ErrNotHeld", i, r.Err)
			}
		case n - 1:
			if !errors.Is(r.Err, leasehold.ErrInvalidTTL) {
				t.Errorf("grant %d: %v, want ErrInvalidTTL", i, r.Err)
			}
		default:
			if r.Err != nil || r.Grant.Token != gs[i].Token || r.Grant.Key != gs[i].Key {
				t.Errorf("grant %d: %+v", i, r)
			}
		}
	}
}

// TestRenewManyServerGone: when no request reaches the server, the whole
// batch fails with a StoreError.
func TestRenewManyServerGone(t *testing.T) {
	srv := servetest.Start(t, memory.New(nil))
	st := srv.Open(t)
	g, err := st.Acquire(context.Background(), acquireReq("k"))
	if err != nil {
		t.Fatal(err)
	}
	srv.Stop(t)
	res, err := st.(leasehold.BatchRenewer).RenewMany(context.Background(), []leasehold.Grant{g})
	if !errors.Is(err, leasehold.ErrStore) || res != nil {
		t.Errorf("RenewMany with the server gone: %v, %v; want a StoreError", res, err)
	}
}
