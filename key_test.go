package leasehold_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/leasehold-go/leasehold"
)

func TestValidateKey(t *testing.T) {
	tests := []struct {
		name string
		key  string
		ok   bool
		msg  string
	}{
		{"simple", "jobs/nightly", true, ""},
		{"unicode", "ключ/鍵", true, ""},
		{"max length", strings.Repeat("k", leasehold.MaxKeyLen), true, ""},
		{"empty", "", false, "empty"},
		{"too long", strings.Repeat("k", leasehold.MaxKeyLen+1), false, "longer than 1024"},
		{"NUL", "a\x00", false, "control byte"},
		{"tab", "a\tb", false, "control byte"},
		{"DEL", "a\x7f", false, "control byte"},
		{"C1 control", "a\u0085", false, "control byte"},
		{"invalid UTF-8", "a\xff", false, "not valid UTF-8"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := leasehold.ValidateKey(tc.key)
			if tc.ok {
				if err != nil {
					t.Fatalf("ValidateKey: %v", err)
				}
				return
			}
			if !errors.Is(err, leasehold.ErrInvalidKey) || !strings.Contains(err.Error(), tc.msg) {
				t.Fatalf("ValidateKey = %v, want ErrInvalidKey mentioning %q", err, tc.msg)
			}
		})
	}
}

func TestValidateTTL(t *testing.T) {
	info := leasehold.Info{Name: "test", MinTTL: time.Second, MaxTTL: time.Hour}
	tests := []struct {
		ttl time.Duration
		msg string
	}{
		{time.Second, ""},
		{time.Hour, ""},
		{0, "not positive"},
		{-time.Second, "not positive"},
		{time.Second - 1, "below the test store's minimum"},
		{time.Hour + 1, "above the test store's maximum"},
		{leasehold.MaxTTL + 1, "above the maximum 24h"},
	}
	for _, tc := range tests {
		err := leasehold.ValidateTTL(tc.ttl, info)
		if tc.msg == "" {
			if err != nil {
				t.Errorf("ValidateTTL(%s) = %v", tc.ttl, err)
			}
			continue
		}
		if !errors.Is(err, leasehold.ErrInvalidTTL) || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("ValidateTTL(%s) = %v, want ErrInvalidTTL mentioning %q", tc.ttl, err, tc.msg)
		}
	}
}

func TestExpBackoff(t *testing.T) {
	b := leasehold.ExpBackoff{Base: 10 * time.Millisecond, Cap: 80 * time.Millisecond}
	tests := []struct {
		n    int
		ceil time.Duration
	}{{1, 10 * time.Millisecond}, {2, 20 * time.Millisecond}, {4, 80 * time.Millisecond}, {10, 80 * time.Millisecond}, {1000, 80 * time.Millisecond}}
	for _, tc := range tests {
		var top time.Duration
		for i := 0; i < 2000; i++ {
			d := b.Delay(tc.n)
			if d <= 0 || d > tc.ceil {
				t.Fatalf("Delay(%d) = %s, want in (0, %s]", tc.n, d, tc.ceil)
			}
			top = max(top, d)
		}
		if top < tc.ceil/2 {
			t.Errorf("Delay(%d) never exceeded %s in 2000 draws: jitter is not full", tc.n, top)
		}
	}
}

func TestOptionsRejected(t *testing.T) {
	for _, o := range []leasehold.Options{{Rho: 0.6}, {Rho: -1}, {Margin: -time.Second}, {RenewFraction: 1.5}} {
		if _, err := leasehold.New(nil, &o); err == nil {
			t.Errorf("New accepted %+v", o)
		}
	}
}
