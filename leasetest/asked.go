package leasetest

import (
	"context"
	"sync"

	"github.com/leasehold-go/leasehold"
)

// asking wraps a store and closes asked at its first acquire attempt
// (Acquire or AcquireWait), so a rule can wait until a waiter has asked
// the store instead of sleeping and hoping it has.
type asking struct {
	leasehold.Store
	once  sync.Once
	asked chan struct{}
}

func (a *asking) Acquire(ctx context.Context, req leasehold.AcquireRequest) (leasehold.Grant, error) {
	a.once.Do(func() { close(a.asked) })
	return a.Store.Acquire(ctx, req)
}

// AcquireWait counts as asking too; the wrapper askedStore returns offers
// it only when the store is a Waiter.
func (a *asking) AcquireWait(ctx context.Context, req leasehold.AcquireRequest) (leasehold.Grant, error) {
	a.once.Do(func() { close(a.asked) })
	return a.Store.(leasehold.Waiter).AcquireWait(ctx, req)
}

// askedStore wraps st, keeping its optional capabilities (so a client waits
// on it as on st: queued, notified or polling), and returns the channel
// closed when a client first asks it for a grant.
func askedStore(st leasehold.Store) (leasehold.Store, <-chan struct{}) {
	a := &asking{Store: st, asked: make(chan struct{})}
	return leasehold.WrapStore(st, a), a.asked
}
