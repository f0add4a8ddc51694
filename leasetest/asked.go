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

// askingNotifier keeps the wrapped store's notifications.
type askingNotifier struct{ *asking }

func (a askingNotifier) Subscribe(ctx context.Context, key string) (<-chan struct{}, func(), error) {
	return a.Store.(leasehold.Notifier).Subscribe(ctx, key)
}

// askingWaiter keeps the wrapped store's queued waits.
type askingWaiter struct{ *asking }

func (a askingWaiter) AcquireWait(ctx context.Context, req leasehold.AcquireRequest) (leasehold.Grant, error) {
	a.once.Do(func() { close(a.asked) })
	return a.Store.(leasehold.Waiter).AcquireWait(ctx, req)
}

// askedStore wraps st, keeping how a client waits on it (queued,
// notified or polling), and returns the channel closed when a client
// first asks it for a grant.
func askedStore(st leasehold.Store) (leasehold.Store, <-chan struct{}) {
	a := &asking{Store: st, asked: make(chan struct{})}
	switch st.(type) {
	case leasehold.Waiter:
		return askingWaiter{a}, a.asked
	case leasehold.Notifier:
		return askingNotifier{a}, a.asked
	}
	return a, a.asked
}
