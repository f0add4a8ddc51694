package stall_test

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/faults/harness"
	"github.com/leasehold-go/leasehold/faults/report"
	"github.com/leasehold-go/leasehold/faults/stall"
	"github.com/leasehold-go/leasehold/storeurl"
)

// lateStore delivers the first grant of the run after the writers' TTL
// (1 s), as a store does under heavy load: the client refuses a grant that
// arrives after its own deadline.
type lateStore struct {
	leasehold.Store
	first *atomic.Bool
}

func (s *lateStore) Acquire(ctx context.Context, req leasehold.AcquireRequest) (leasehold.Grant, error) {
	g, err := s.Store.Acquire(ctx, req)
	if err == nil && s.first.CompareAndSwap(true, false) {
		select {
		case <-ctx.Done():
		case <-time.After(1500 * time.Millisecond):
		}
	}
	return g, err
}

// TestStallLateGrant: a grant that arrives after the client's deadline is
// not the end of the workload. The writers' waiting Acquire drops such a
// grant and waits on (the Client's late-grant handling, late.go in the
// root module); a single try would return it as a LostError, which the
// writer tries again after (TestRetryable).
func TestStallLateGrant(t *testing.T) {
	var first atomic.Bool
	first.Store(true)
	open := func(ctx context.Context, url string) (leasehold.Store, error) {
		s, err := storeurl.Open(ctx, url)
		if err != nil {
			return nil, err
		}
		return leasehold.WrapStore(s, &lateStore{Store: s, first: &first}), nil
	}
	r, err := stall.Run(context.Background(), stall.Config{
		Backend: &harness.SQLite{}, Open: open, Dir: t.TempDir(),
		Writers: 2, Duration: 3 * time.Second, Seed: 7, Log: t.Logf,
	})
	if err != nil {
		t.Fatalf("W7 ended on a late grant: %v", err)
	}
	t.Log(report.StallSummary(r))
	if first.Load() {
		t.Fatal("no grant was delayed: the test proves nothing")
	}
	if r.Landed == 0 {
		t.Errorf("want writes landed after the late grant: %s", report.StallSummary(r))
	}
}

// TestRetryable: lost grants and store failures are tried again; refusals
// another try cannot change, and misuse, are not.
func TestRetryable(t *testing.T) {
	late := &leasehold.LostError{Key: "k1", Token: 53, Reason: fmt.Errorf("%w: the grant arrived after the holder's deadline", leasehold.ErrExpired)}
	store := func(err error) error { return &leasehold.StoreError{Store: "x", Op: "acquire", Err: err} }
	for _, tc := range []struct {
		name string
		err  error
		want bool
	}{
		{"late grant", late, true},
		{"wrapped late grant", fmt.Errorf("acquire: %w", late), true},
		{"store failure", store(errors.New("connection refused")), true},
		{"tokens exhausted", store(leasehold.ErrTokensExhausted), false},
		{"foreign record", store(&leasehold.ForeignRecordError{Object: "k1", Reason: "bad"}), false},
		{"invalid key", leasehold.ErrInvalidKey, false},
		{"closed", leasehold.ErrClosed, false},
		{"other", errors.New("boom"), false},
	} {
		if got := stall.Retryable(tc.err); got != tc.want {
			t.Errorf("%s: Retryable(%v) = %v, want %v", tc.name, tc.err, got, tc.want)
		}
	}
}
