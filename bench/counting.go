package bench

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/leasehold-go/leasehold"
)

// counter counts what a client asks of its store. It is the middleware of
// the wrapper count returns, which keeps exactly the optional capabilities
// of the store it wraps, so a client behaves over the wrapper as it would
// over the store itself.
type counter struct {
	store leasehold.Store

	attempts atomic.Int64 // Acquire and AcquireWait calls
	refused  atomic.Int64 // of which answered ErrHeld
	grants   atomic.Int64 // of which granted
	renewals atomic.Int64 // grants renewed (one per grant in a batch)
	calls    atomic.Int64 // every Acquire, AcquireWait, Release, Holder and List call

	mu         sync.Mutex
	renewTimes []time.Duration // one per Renew or RenewMany call
	renewFails int64           // renewals that failed (not refused by the owner check)
}

func (c *counter) acquired(err error) {
	switch {
	case err == nil:
		c.grants.Add(1)
	case errors.Is(err, leasehold.ErrHeld):
		c.refused.Add(1)
	}
}

func (c *counter) renewed(d time.Duration, n int, err error) {
	c.renewals.Add(int64(n))
	c.mu.Lock()
	c.renewTimes = append(c.renewTimes, d)
	// A refusal is the owner check's answer, and a cancelled renewal is
	// one the client abandoned on release: neither is a failure.
	if err != nil && !errors.Is(err, leasehold.ErrNotHeld) && !errors.Is(err, context.Canceled) {
		c.renewFails++
	}
	c.mu.Unlock()
}

// renewStats returns the renewal latencies so far and the failure count.
func (c *counter) renewStats() ([]time.Duration, int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]time.Duration(nil), c.renewTimes...), c.renewFails
}

// Acquire implements leasehold.Store, counting the attempt.
func (c *counter) Acquire(ctx context.Context, req leasehold.AcquireRequest) (leasehold.Grant, error) {
	c.attempts.Add(1)
	c.calls.Add(1)
	g, err := c.store.Acquire(ctx, req)
	c.acquired(err)
	return g, err
}

// Renew implements leasehold.Store, counting the renewal and timing it.
func (c *counter) Renew(ctx context.Context, g leasehold.Grant) (leasehold.Grant, error) {
	t0 := time.Now()
	r, err := c.store.Renew(ctx, g)
	c.renewed(time.Since(t0), 1, err)
	return r, err
}

// Release implements leasehold.Store, counting the call.
func (c *counter) Release(ctx context.Context, g leasehold.Grant) error {
	c.calls.Add(1)
	return c.store.Release(ctx, g)
}

// Holder implements leasehold.Store, counting the call.
func (c *counter) Holder(ctx context.Context, key string) (leasehold.Holder, error) {
	c.calls.Add(1)
	return c.store.Holder(ctx, key)
}

// List implements leasehold.Lister, counting the call. The wrapper offers
// it only when the store is a Lister.
func (c *counter) List(ctx context.Context, prefix string) ([]leasehold.Holder, error) {
	c.calls.Add(1)
	return c.store.(leasehold.Lister).List(ctx, prefix)
}

// Info implements leasehold.Store.
func (c *counter) Info() leasehold.Info { return c.store.Info() }

// Close does nothing: the wrapped store belongs to the caller of Run.
func (c *counter) Close() error { return nil }

// AcquireWait implements leasehold.Waiter, counting it as one attempt. The
// wrapper offers it only when the store is a Waiter.
func (c *counter) AcquireWait(ctx context.Context, req leasehold.AcquireRequest) (leasehold.Grant, error) {
	c.attempts.Add(1)
	c.calls.Add(1)
	g, err := c.store.(leasehold.Waiter).AcquireWait(ctx, req)
	c.acquired(err)
	return g, err
}

// RenewMany implements leasehold.BatchRenewer, counting every grant the
// batch renewed. The wrapper offers it only when the store is a
// BatchRenewer.
func (c *counter) RenewMany(ctx context.Context, gs []leasehold.Grant) ([]leasehold.RenewResult, error) {
	t0 := time.Now()
	res, err := c.store.(leasehold.BatchRenewer).RenewMany(ctx, gs)
	n := 0
	if err == nil {
		for _, r := range res {
			if r.Err == nil {
				n++
			}
		}
	}
	c.renewed(time.Since(t0), n, err)
	return res, err
}

// count wraps s in a store that counts acquire attempts and renewals and
// offers exactly the optional capabilities s has (leasehold.WrapStore).
func count(s leasehold.Store) (leasehold.Store, *counter) {
	c := &counter{store: s}
	return leasehold.WrapStore(s, c), c
}
