package benchcycle

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/leasehold-go/leasehold"
)

// Store returns the Impl.New of a leasehold store: each worker's cycle is
// the store's Acquire and Release with ttl. On the hot key it waits with
// AcquireWait when the store has it (leasehold.Waiter), and otherwise
// returns ErrHeld for a held key, which Drive tries again at once.
func Store(st leasehold.Store, ttl time.Duration) func(*testing.B, string, bool) (Cycle, func()) {
	return func(_ *testing.B, key string, hot bool) (Cycle, func()) {
		req := leasehold.AcquireRequest{Key: key, Owner: leasehold.NewOwnerID(), Label: "bench", TTL: ttl}
		acquire := st.Acquire
		if w, ok := st.(leasehold.Waiter); ok && hot {
			acquire = w.AcquireWait
		}
		return func(ctx context.Context) error {
			g, err := acquire(ctx, req)
			if errors.Is(err, leasehold.ErrHeld) {
				return ErrHeld
			}
			if err != nil {
				return err
			}
			return st.Release(ctx, g)
		}, nil
	}
}

// Client returns the Impl.New of a leasehold.Client: each worker's cycle
// is the client's Acquire (on the hot key, waiting as long as it takes)
// and the lease's Release, with ttl.
func Client(lc *leasehold.Client, ttl time.Duration) func(*testing.B, string, bool) (Cycle, func()) {
	return func(_ *testing.B, key string, hot bool) (Cycle, func()) {
		opts := leasehold.AcquireOptions{TTL: ttl}
		if hot {
			opts.Wait = leasehold.WaitForever
		}
		return func(ctx context.Context) error {
			l, err := lc.Acquire(ctx, key, opts)
			if err != nil {
				return err
			}
			return l.Release(ctx)
		}, nil
	}
}

// NewClient returns a leasehold.Client over st, labelled "bench", closed
// when b ends.
func NewClient(b testing.TB, st leasehold.Store) *leasehold.Client {
	b.Helper()
	lc, err := leasehold.New(st, &leasehold.Options{Label: "bench"})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = lc.Close() })
	return lc
}
