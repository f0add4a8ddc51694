package leasehold_test

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/memory"
)

// FuzzOptions: options New accepts are finite and in range, and an acquire
// they allow holds a lease whose deadline is after its grant and before its
// TTL runs out, renewed at a positive interval that comes before the
// deadline. A refusal names the field; an acquire's refusal is ErrInvalidTTL
// or ErrInvalidWait.
func FuzzOptions(f *testing.F) {
	f.Add(0.0, 0.0, int64(0), int64(0), int64(0), int64(0), int64(0))
	f.Add(math.NaN(), 0.0, int64(0), int64(0), int64(0), int64(time.Second), int64(0))
	f.Add(0.0, math.NaN(), int64(0), int64(0), int64(0), int64(time.Second), int64(0))
	f.Add(math.Inf(1), math.Inf(-1), int64(-1), int64(-1), int64(-1), int64(-1), int64(-1))
	f.Add(0.49, 0.5, int64(leasehold.MaxTTL), int64(time.Hour), int64(time.Second), int64(0), int64(math.MaxInt64))
	f.Add(1e-300, 0.01, int64(time.Millisecond), int64(1), int64(0), int64(2*time.Millisecond), int64(time.Minute))
	f.Add(0.3, 0.2, int64(0), int64(math.MaxInt64), int64(0), int64(time.Hour), int64(1))
	f.Fuzz(func(t *testing.T, rho, rf float64, ttl, margin, release, acqTTL, wait int64) {
		clock := newFakeClock()
		o := leasehold.Options{Rho: rho, RenewFraction: rf, TTL: time.Duration(ttl), Margin: time.Duration(margin),
			ReleaseTimeout: time.Duration(release), Clock: clock, Label: "fuzz"}
		c, err := leasehold.New(memory.New(&memory.Options{Now: clock.Now}), &o)
		if err != nil {
			if !strings.Contains(err.Error(), "Options.") {
				t.Fatalf("New(%+v) = %v: the refusal names no field", o, err)
			}
			return
		}
		defer c.Close()
		got := c.Options()
		if !(got.Rho > 0 && got.Rho < 0.5) || !(got.RenewFraction >= 0.01 && got.RenewFraction <= 0.5) ||
			got.TTL <= 0 || got.TTL > leasehold.MaxTTL || got.Margin <= 0 || got.ReleaseTimeout <= 0 {
			t.Fatalf("New accepted %+v as %+v", o, got)
		}
		checkAcquire(t, c, clock, leasehold.AcquireOptions{TTL: time.Duration(acqTTL), Wait: time.Duration(wait)})
	})
}

func checkAcquire(t *testing.T, c *leasehold.Client, clock *fakeClock, ao leasehold.AcquireOptions) {
	t.Helper()
	o := c.Options()
	now := clock.Now()
	l, err := c.Acquire(context.Background(), "k", ao)
	if err != nil {
		if !errors.Is(err, leasehold.ErrInvalidTTL) && !errors.Is(err, leasehold.ErrInvalidWait) {
			t.Fatalf("Acquire(%+v) with %+v: %v, want ErrInvalidTTL or ErrInvalidWait", ao, o, err)
		}
		return
	}
	defer l.Release(context.Background())
	ttl := l.TTL()
	dl := l.Deadline()
	if !dl.After(now) || !dl.Before(now.Add(ttl)) {
		t.Fatalf("Acquire(%+v) with %+v: deadline %s after the grant, not within the TTL %s", ao, o, dl.Sub(now), ttl)
	}
	interval := time.Duration(float64(ttl) * o.RenewFraction)
	if interval <= 0 || o.FirstRenewal(ttl) >= o.HoldFor(ttl) {
		t.Fatalf("Acquire(%+v) with %+v: renews every %s, the last at %s, deadline at %s", ao, o, interval, o.FirstRenewal(ttl), o.HoldFor(ttl))
	}
}

// FuzzAcquireKey: a key is accepted exactly when it is 1 to MaxKeyLen
// bytes of UTF-8 without control characters; an accepted key round-trips
// through a store; a refused one matches ErrInvalidKey in ValidateKey, the
// store's entry check and the client.
func FuzzAcquireKey(f *testing.F) {
	for _, s := range []string{"k", "", "a\x00b", "a\nb", "\x7f", "\u0085", "\u00a0", "\xff\xfe", "日本語/キー",
		strings.Repeat("k", leasehold.MaxKeyLen), strings.Repeat("k", leasehold.MaxKeyLen+1), "../../etc/passwd", "a b"} {
		f.Add(s)
	}
	st := memory.New(nil)
	c, err := leasehold.New(st, nil)
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { _ = c.Close() })
	f.Fuzz(func(t *testing.T, key string) {
		ctx := context.Background()
		err := leasehold.ValidateKey(key)
		clean := key != "" && len(key) <= leasehold.MaxKeyLen && utf8.ValidString(key) && !strings.ContainsFunc(key, func(r rune) bool {
			return r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0)
		})
		if (err == nil) != clean {
			t.Fatalf("ValidateKey(%q) = %v, but the key is clean: %v", key, err, clean)
		}
		l, aerr := c.Acquire(ctx, key, leasehold.AcquireOptions{TTL: time.Minute})
		if err != nil {
			r := leasehold.AcquireRequest{Key: key, Owner: "o", TTL: time.Minute}
			if !errors.Is(err, leasehold.ErrInvalidKey) || !errors.Is(leasehold.CheckAcquire(r, st.Info()), leasehold.ErrInvalidKey) || !errors.Is(aerr, leasehold.ErrInvalidKey) {
				t.Fatalf("key %q: ValidateKey %v, CheckAcquire and Acquire %v: want ErrInvalidKey from each", key, err, aerr)
			}
			return
		}
		if aerr != nil {
			t.Fatalf("Acquire(%q): %v", key, aerr)
		}
		defer l.Release(ctx)
		h, herr := st.Holder(ctx, key)
		if herr != nil || h.Key != key || h.Token != l.Token() {
			t.Fatalf("Holder(%q) = %+v, %v; want the lease's key and token %d", key, h, herr, l.Token())
		}
	})
}
