package leasehold_test

import (
	"errors"
	"strings"
	"testing"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/leasehold-go/leasehold"
)

// FuzzValidateKey checks ValidateKey against an independent statement of the
// rule: a key is accepted exactly when it is non-empty, at most MaxKeyLen
// bytes, valid UTF-8 and free of control characters (Unicode's Cc: C0, DEL,
// C1); a refusal wraps ErrInvalidKey and names its reason.
func FuzzValidateKey(f *testing.F) {
	for _, seed := range []string{
		"jobs/nightly", "", "ключ/鍵", "a\x00b", "tab\there", "del\x7f", "c1\u0085",
		"\xff\xfe", strings.Repeat("k", leasehold.MaxKeyLen), strings.Repeat("k", leasehold.MaxKeyLen+1),
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, key string) {
		err := leasehold.ValidateKey(key)
		var reason string
		switch {
		case key == "":
			reason = "empty"
		case len(key) > leasehold.MaxKeyLen:
			reason = "longer than"
		case !utf8.ValidString(key):
			reason = "not valid UTF-8"
		case strings.IndexFunc(key, unicode.IsControl) >= 0:
			reason = "control byte"
		}
		if reason == "" {
			if err != nil {
				t.Fatalf("ValidateKey(%q) = %v, want nil", key, err)
			}
			return
		}
		if !errors.Is(err, leasehold.ErrInvalidKey) {
			t.Fatalf("ValidateKey(%q) = %v, want an error wrapping ErrInvalidKey", key, err)
		}
		if !strings.Contains(err.Error(), reason) {
			t.Fatalf("ValidateKey(%q) = %q, want it to say %q", key, err, reason)
		}
	})
}

// FuzzValidateTTL checks ValidateTTL's bounds: a TTL is accepted exactly when
// it is positive, at most MaxTTL and within the store's own bounds (zero
// meaning none); a refusal wraps ErrInvalidTTL.
func FuzzValidateTTL(f *testing.F) {
	f.Add(int64(time.Second), int64(0), int64(0))
	f.Add(int64(0), int64(0), int64(0))
	f.Add(int64(-1), int64(0), int64(0))
	f.Add(int64(leasehold.MaxTTL)+1, int64(0), int64(0))
	f.Add(int64(10*time.Second), int64(15*time.Second), int64(time.Minute))
	f.Add(int64(2*time.Minute), int64(15*time.Second), int64(time.Minute))
	f.Fuzz(func(t *testing.T, ttl, minTTL, maxTTL int64) {
		info := leasehold.Info{Name: "fuzz", MinTTL: time.Duration(minTTL), MaxTTL: time.Duration(maxTTL)}
		d := time.Duration(ttl)
		want := d > 0 && d <= leasehold.MaxTTL &&
			(info.MinTTL <= 0 || d >= info.MinTTL) && (info.MaxTTL <= 0 || d <= info.MaxTTL)
		err := leasehold.ValidateTTL(d, info)
		if want && err != nil {
			t.Fatalf("ValidateTTL(%v, min %v, max %v) = %v, want nil", d, info.MinTTL, info.MaxTTL, err)
		}
		if !want && !errors.Is(err, leasehold.ErrInvalidTTL) {
			t.Fatalf("ValidateTTL(%v, min %v, max %v) = %v, want an error wrapping ErrInvalidTTL", d, info.MinTTL, info.MaxTTL, err)
		}
	})
}
