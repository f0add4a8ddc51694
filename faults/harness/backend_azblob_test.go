package harness_test

import (
	"math"
	"testing"
	"time"

	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/faults/harness"
	"github.com/leasehold-go/leasehold/storeurl"
)

// TestAzblobRestartKeepsToken starts the azblob backend on Azurite, takes
// a lease through the URL the holders get, restarts the store (F9's kill
// and restart) and takes the key again: the token must go on from where
// it was, as on Azure, where the counter blob is never lost.
func TestAzblobRestartKeepsToken(t *testing.T) {
	ctx := t.Context()
	b := &harness.Azblob{}
	if err := b.Start(ctx, t.TempDir()); err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	acquire := func() uint64 {
		t.Helper()
		s, err := storeurl.Open(ctx, b.URL(b.Endpoints()))
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		g, err := s.Acquire(ctx, leasehold.AcquireRequest{Key: "k", Owner: leasehold.NewOwnerID(), Label: "t", TTL: 15 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Release(ctx, g); err != nil {
			t.Fatal(err)
		}
		return g.Token
	}
	first := acquire()
	if err := b.KillStore(); err != nil {
		t.Fatal(err)
	}
	if err := b.RestartStore(ctx, false); err != nil {
		t.Fatal(err)
	}
	if second := acquire(); second <= first {
		t.Fatalf("token after the store restart %d, before it %d: the restart lost the counter blob", second, first)
	}
}

func TestAzblobTakeoverBound(t *testing.T) {
	tests := []struct {
		ttl  time.Duration
		want float64 // x TTL
	}{
		{15 * time.Second, 20.0 / 15},                    // lease 15 s + renew period 5 s
		{15500 * time.Millisecond, (16 + 15.5/3) / 15.5}, // lease rounds up to 16 s
	}
	for _, tc := range tests {
		if got := new(harness.Azblob).TakeoverBound(tc.ttl); math.Abs(got-tc.want) > 1e-9 {
			t.Errorf("TakeoverBound(%s) = %.4f x TTL, want %.4f", tc.ttl, got, tc.want)
		}
	}
}
