package leasehold_test

import (
	"context"
	"errors"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/memory"
)

func TestOptionsValidation(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	tests := []struct {
		name  string
		opts  leasehold.Options
		field string // "" means accepted
	}{
		{"zero is the defaults", leasehold.Options{}, ""},
		{"rho NaN", leasehold.Options{Rho: nan}, "Rho"},
		{"rho +Inf", leasehold.Options{Rho: inf}, "Rho"},
		{"rho -Inf", leasehold.Options{Rho: -inf}, "Rho"},
		{"rho negative", leasehold.Options{Rho: -0.1}, "Rho"},
		{"rho half", leasehold.Options{Rho: 0.5}, "Rho"},
		{"rho tiny", leasehold.Options{Rho: 1e-300}, ""},
		{"rho just under half", leasehold.Options{Rho: 0.49}, ""},
		{"renew fraction NaN", leasehold.Options{RenewFraction: nan}, "RenewFraction"},
		{"renew fraction +Inf", leasehold.Options{RenewFraction: inf}, "RenewFraction"},
		{"renew fraction -Inf", leasehold.Options{RenewFraction: -inf}, "RenewFraction"},
		{"renew fraction negative", leasehold.Options{RenewFraction: -0.2}, "RenewFraction"},
		{"renew fraction tiny", leasehold.Options{RenewFraction: 1e-9}, "RenewFraction"},
		{"renew fraction over half", leasehold.Options{RenewFraction: 0.51}, "RenewFraction"},
		{"renew fraction smallest", leasehold.Options{RenewFraction: 0.01}, ""},
		{"renew fraction half", leasehold.Options{RenewFraction: 0.5}, ""},
		{"ttl negative", leasehold.Options{TTL: -time.Second}, "TTL"},
		{"ttl above MaxTTL", leasehold.Options{TTL: leasehold.MaxTTL + 1}, "TTL"},
		{"ttl MaxTTL", leasehold.Options{TTL: leasehold.MaxTTL}, ""},
		{"margin negative", leasehold.Options{Margin: -time.Nanosecond}, "Margin"},
		{"margin absurd", leasehold.Options{Margin: math.MaxInt64}, "Margin"},
		{"release timeout negative", leasehold.Options{ReleaseTimeout: -time.Second}, "ReleaseTimeout"},
		{"exp backoff base negative", leasehold.Options{Backoff: leasehold.ExpBackoff{Base: -1}}, "Backoff"},
		{"exp backoff cap negative", leasehold.Options{Backoff: leasehold.ExpBackoff{Cap: math.MinInt64}}, "Backoff"},
		{"const backoff zero", leasehold.Options{Backoff: leasehold.ConstBackoff(0)}, "Backoff"},
		{"const backoff negative", leasehold.Options{Backoff: leasehold.ConstBackoff(-time.Second)}, "Backoff"},
		{"const backoff", leasehold.Options{Backoff: leasehold.ConstBackoff(time.Millisecond)}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, err := leasehold.New(memory.New(nil), &tc.opts)
			if tc.field == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				_ = c.Close()
				return
			}
			if err == nil {
				_ = c.Close()
				t.Fatalf("accepted %+v", tc.opts)
			}
			if !strings.Contains(err.Error(), "Options."+tc.field) {
				t.Errorf("error %q does not name Options.%s", err, tc.field)
			}
		})
	}
}

// TestNaNRhoNeverYieldsTwoHolders: a NaN Rho made the holder's deadline
// millions of hours away, so the holder's context stayed live after the
// store let the lease expire and gave the key to another owner.
func TestNaNRhoNeverYieldsTwoHolders(t *testing.T) {
	var mu sync.Mutex
	now := time.Now()
	st := memory.New(&memory.Options{Now: func() time.Time { mu.Lock(); defer mu.Unlock(); return now }})
	for _, o := range []leasehold.Options{{Rho: math.NaN()}, {RenewFraction: math.NaN()}, {Rho: math.Inf(-1)}} {
		a, err := leasehold.New(st, &o)
		if err != nil {
			if !strings.Contains(err.Error(), "NaN") && !strings.Contains(err.Error(), "Inf") {
				t.Errorf("%+v refused without naming the value: %v", o, err)
			}
			continue
		}
		t.Cleanup(func() { _ = a.Close() })
		ttl := time.Hour
		l, err := a.Acquire(context.Background(), "k", leasehold.AcquireOptions{TTL: ttl})
		if err != nil {
			continue // refused per acquire: no holder at all is safe
		}
		if time.Until(l.Deadline()) > ttl {
			t.Errorf("%+v: deadline %s away, beyond the TTL %s", o, time.Until(l.Deadline()).Round(time.Hour), ttl)
		}
		mu.Lock()
		now = now.Add(ttl + time.Second) // the store's TTL runs out
		mu.Unlock()
		b := newClient(t, st, nil)
		lb, err := b.Acquire(context.Background(), "k", leasehold.AcquireOptions{TTL: time.Minute})
		if err != nil && !errors.Is(err, leasehold.ErrHeld) {
			t.Fatal(err)
		}
		if err == nil && l.Context().Err() == nil && l.Deadline().After(time.Now().Add(ttl)) {
			t.Errorf("%+v: two holders: the first lease's context is live until %s while the second holds token %d", o, l.Deadline(), lb.Token())
		}
		if lb != nil {
			_ = lb.Release(context.Background())
		}
		_ = l.Release(context.Background())
	}
}

// TestMarginRefusalNamesRange: the refusal of a Margin gives its range as
// [0, MaxTTL], zero being allowed (it means DefaultMargin).
func TestMarginRefusalNamesRange(t *testing.T) {
	st := memory.New(nil)
	defer st.Close()
	for _, m := range []time.Duration{-1, leasehold.MaxTTL + 1} {
		_, err := leasehold.New(st, &leasehold.Options{Margin: m})
		if err == nil || !strings.Contains(err.Error(), "outside [0, ") {
			t.Errorf("Margin %s: %v, want a refusal naming the range [0, MaxTTL]", m, err)
		}
	}
	c, err := leasehold.New(st, &leasehold.Options{Margin: 0})
	if err != nil {
		t.Fatalf("Margin 0: %v, want DefaultMargin", err)
	}
	defer c.Close()
	if got := c.Options().Margin; got != leasehold.DefaultMargin {
		t.Errorf("Margin 0 became %s, want DefaultMargin", got)
	}
}
