package bench

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/leasehold-go/leasehold"
)

// counter counts what a client asks of its store. It is shared by the
// wrapper types below, which keep exactly the optional capabilities of the
// store they wrap, so a client behaves over the wrapper as it would over the
// store itself.
type counter struct {
	store leasehold.Store

	attempts atomic.Int64 // Acquire and AcquireWait calls
	refused  atomic.Int64 // of which answered ErrHeld
	grants   atomic.Int64 // of which granted
	renewals atomic.Int64 // grants renewed (one per grant in a batch)

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

// countingStore is the Store part of every wrapper.
type countingStore struct{ c *counter }

func (s countingStore) Acquire(ctx context.Context, req leasehold.AcquireRequest) (leasehold.Grant, error) {
	s.c.attempts.Add(1)
	g, err := s.c.store.Acquire(ctx, req)
	s.c.acquired(err)
	return g, err
}

func (s countingStore) Renew(ctx context.Context, g leasehold.Grant) (leasehold.Grant, error) {
	t0 := time.Now()
	r, err := s.c.store.Renew(ctx, g)
	s.c.renewed(time.Since(t0), 1, err)
	return r, err
}

func (s countingStore) Release(ctx context.Context, g leasehold.Grant) error {
	return s.c.store.Release(ctx, g)
}

func (s countingStore) Holder(ctx context.Context, key string) (leasehold.Holder, error) {
	return s.c.store.Holder(ctx, key)
}

func (s countingStore) Info() leasehold.Info { return s.c.store.Info() }

// Close does nothing: the wrapped store belongs to the caller of Run.
func (s countingStore) Close() error { return nil }

// waitPart forwards AcquireWait, counting it as one attempt.
type waitPart struct {
	c *counter
	w leasehold.Waiter
}

func (p waitPart) AcquireWait(ctx context.Context, req leasehold.AcquireRequest) (leasehold.Grant, error) {
	p.c.attempts.Add(1)
	g, err := p.w.AcquireWait(ctx, req)
	p.c.acquired(err)
	return g, err
}

// batchPart forwards RenewMany, counting every grant in the batch.
type batchPart struct {
	c *counter
	b leasehold.BatchRenewer
}

func (p batchPart) RenewMany(ctx context.Context, gs []leasehold.Grant) ([]leasehold.RenewResult, error) {
	t0 := time.Now()
	res, err := p.b.RenewMany(ctx, gs)
	n := 0
	if err == nil {
		for _, r := range res {
			if r.Err == nil {
				n++
			}
		}
	}
	p.c.renewed(time.Since(t0), n, err)
	return res, err
}

// The eight combinations of the capabilities a client looks for.
type (
	cN  struct{ countingStore }
	cNo struct {
		countingStore
		leasehold.Notifier
	}
	cW struct {
		countingStore
		waitPart
	}
	cB struct {
		countingStore
		batchPart
	}
	cNoW struct {
		countingStore
		leasehold.Notifier
		waitPart
	}
	cNoB struct {
		countingStore
		leasehold.Notifier
		batchPart
	}
	cWB struct {
		countingStore
		waitPart
		batchPart
	}
	cNoWB struct {
		countingStore
		leasehold.Notifier
		waitPart
		batchPart
	}
)

// count wraps s in a store that counts acquire attempts and renewals and
// offers exactly the Notifier, Waiter and BatchRenewer capabilities s has.
func count(s leasehold.Store) (leasehold.Store, *counter) {
	c := &counter{store: s}
	base := countingStore{c}
	n, isN := s.(leasehold.Notifier)
	w, isW := s.(leasehold.Waiter)
	b, isB := s.(leasehold.BatchRenewer)
	wp, bp := waitPart{c, w}, batchPart{c, b}
	switch {
	case isN && isW && isB:
		return cNoWB{base, n, wp, bp}, c
	case isN && isW:
		return cNoW{base, n, wp}, c
	case isN && isB:
		return cNoB{base, n, bp}, c
	case isW && isB:
		return cWB{base, wp, bp}, c
	case isN:
		return cNo{base, n}, c
	case isW:
		return cW{base, wp}, c
	case isB:
		return cB{base, bp}, c
	}
	return cN{base}, c
}
