package harness

import (
	"context"
	"errors"
	"sync"

	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/faults/history"
)

// errCut is what a call returns when the holder's own partition switch
// (SetCut) cut it off from the store.
var errCut = errors.New("faults: holder cut off from the store (in-holder partition)")

// recStore wraps a store: it records every call with its call and return
// times, and can cut the holder off from the store (every call blocks until
// the cut heals, then fails as if its connection had been reset). The cut
// is the partition fault for stores without a network (the embedded store).
//
// Only the Store methods, the Waiter's AcquireWait and the BatchRenewer's
// RenewMany are recorded and cut: they are the calls that grant, renew and
// release. The other optional capabilities (Subscribe, Watch, List,
// LostReason) go straight to the inner store, unrecorded and uncut: they
// only wake, list or explain and never change who holds a key, so a cut
// that let them through cannot make two holders. A store without a network
// that gains a Watcher and wants it cut too adds the method here.
type recStore struct {
	inner leasehold.Store
	rec   history.Recorder

	mu  sync.Mutex
	cut chan struct{} // non-nil while cut; closed when healed
}

// WrapStore returns s wrapped in a recorder that keeps exactly s's optional
// capabilities (leasehold.WrapStore), so the client behaves as it would on
// s. The second result cuts (true) or heals (false) the holder's link to
// the store.
func WrapStore(s leasehold.Store, rec history.Recorder) (leasehold.Store, func(bool)) {
	r := &recStore{inner: s, rec: rec}
	return leasehold.WrapStore(s, r), r.setCut
}

func (r *recStore) setCut(on bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case on && r.cut == nil:
		r.cut = make(chan struct{})
	case !on && r.cut != nil:
		close(r.cut)
		r.cut = nil
	}
}

// gate blocks while the holder is cut off; it returns errCut if the call
// was cut (then healed), or ctx's error.
func (r *recStore) gate(ctx context.Context) error {
	r.mu.Lock()
	c := r.cut
	r.mu.Unlock()
	if c == nil {
		return nil
	}
	select {
	case <-c:
		return &leasehold.StoreError{Store: "faults", Op: "call", Err: errCut}
	case <-ctx.Done():
		return ctx.Err()
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// Acquire implements leasehold.Store, recording the call.
func (r *recStore) Acquire(ctx context.Context, req leasehold.AcquireRequest) (leasehold.Grant, error) {
	t0 := history.Mono()
	var g leasehold.Grant
	err := r.gate(ctx)
	if err == nil {
		g, err = r.inner.Acquire(ctx, req)
	}
	r.rec.Record(history.Event{T0: t0, T: history.Mono(), Kind: history.EvStoreAcquire, Key: req.Key, Owner: req.Owner, Token: g.Token, Err: errString(err)})
	return g, err
}

// Renew implements leasehold.Store, recording the call.
func (r *recStore) Renew(ctx context.Context, g leasehold.Grant) (leasehold.Grant, error) {
	t0 := history.Mono()
	out, err := g, r.gate(ctx)
	if err == nil {
		out, err = r.inner.Renew(ctx, g)
	}
	r.rec.Record(history.Event{T0: t0, T: history.Mono(), Kind: history.EvStoreRenew, Key: g.Key, Owner: g.Owner, Token: g.Token, Err: errString(err)})
	return out, err
}

// Release implements leasehold.Store, recording the call.
func (r *recStore) Release(ctx context.Context, g leasehold.Grant) error {
	t0 := history.Mono()
	err := r.gate(ctx)
	if err == nil {
		err = r.inner.Release(ctx, g)
	}
	r.rec.Record(history.Event{T0: t0, T: history.Mono(), Kind: history.EvStoreRelease, Key: g.Key, Owner: g.Owner, Token: g.Token, Err: errString(err)})
	return err
}

// Holder implements leasehold.Store.
func (r *recStore) Holder(ctx context.Context, key string) (leasehold.Holder, error) {
	if err := r.gate(ctx); err != nil {
		return leasehold.Holder{}, err
	}
	return r.inner.Holder(ctx, key)
}

// Info implements leasehold.Store.
func (r *recStore) Info() leasehold.Info { return r.inner.Info() }

// Close implements leasehold.Store.
func (r *recStore) Close() error { return r.inner.Close() }

// AcquireWait implements leasehold.Waiter, recording the call; the wrapper
// offers it only when the inner store is a Waiter.
func (r *recStore) AcquireWait(ctx context.Context, req leasehold.AcquireRequest) (leasehold.Grant, error) {
	t0 := history.Mono()
	var g leasehold.Grant
	err := r.gate(ctx)
	if err == nil {
		g, err = r.inner.(leasehold.Waiter).AcquireWait(ctx, req)
	}
	r.rec.Record(history.Event{T0: t0, T: history.Mono(), Kind: history.EvStoreAcquire, Key: req.Key, Owner: req.Owner, Token: g.Token, Err: errString(err), Note: "wait"})
	return g, err
}

// RenewMany implements leasehold.BatchRenewer, recording each renewal; the
// wrapper offers it only when the inner store is a BatchRenewer.
func (r *recStore) RenewMany(ctx context.Context, gs []leasehold.Grant) ([]leasehold.RenewResult, error) {
	t0 := history.Mono()
	var res []leasehold.RenewResult
	err := r.gate(ctx)
	if err == nil {
		res, err = r.inner.(leasehold.BatchRenewer).RenewMany(ctx, gs)
	}
	t := history.Mono()
	for i, g := range gs {
		e := err
		if e == nil && i < len(res) {
			e = res[i].Err
		}
		r.rec.Record(history.Event{T0: t0, T: t, Kind: history.EvStoreRenew, Key: g.Key, Owner: g.Owner, Token: g.Token, Err: errString(e), Note: "batch"})
	}
	return res, err
}
