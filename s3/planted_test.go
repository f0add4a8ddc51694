package s3_test

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/internal/testserver"
)

// A valid owner hash and write nonce for planted records.
const (
	plantOwner = "0123456789abcdef0123456789abcdef"
	plantWrite = "0123456789abcdef"
)

func counterBody(key string, tok uint64) string {
	return fmt.Sprintf(`{"leasehold":1,"kind":"counter","key":%q,"token":%d,"write":%q}`, key, tok, plantWrite)
}

func tombBody(key string, tok uint64) string {
	return fmt.Sprintf(`{"leasehold":1,"kind":"released","key":%q,"token":%d,"write":%q}`, key, tok, plantWrite)
}

// wantExhausted checks that err refuses an acquire of key because its
// tokens are exhausted: a store error naming the key, not a held error.
func wantExhausted(t *testing.T, what, key string, err error) {
	t.Helper()
	if !errors.Is(err, leasehold.ErrTokensExhausted) || errors.Is(err, leasehold.ErrHeld) {
		t.Fatalf("%s: %v; want ErrTokensExhausted", what, err)
	}
	wantErr(t, what, err, "s3", "acquire", fmt.Sprintf("%q", key))
}

// testTokensExhausted plants counters and tombstones at and near 2^64-1,
// as someone with write access to the bucket could: the store refuses the
// grant rather than wrap to a lower token, and holds nothing afterwards.
func testTokensExhausted(t *testing.T, v *testserver.Versity) {
	s := open(t, v, "planted")
	owner := leasehold.NewOwnerID()
	req := func(key string) leasehold.AcquireRequest {
		return leasehold.AcquireRequest{Key: key, Owner: owner, Label: "test", TTL: 15 * time.Second}
	}

	// A counter at the largest token.
	put(t, s, s.CounterObject("max"), counterBody("max", math.MaxUint64))
	_, err := s.Acquire(ctxT(t), req("max"))
	wantExhausted(t, "counter at 2^64-1", "max", err)
	if _, err := s.Holder(ctxT(t), "max"); !errors.Is(err, leasehold.ErrNotHeld) {
		t.Fatalf("after a refused acquire, Holder: %v, want ErrNotHeld", err)
	}
	_, err = s.Acquire(ctxT(t), leasehold.AcquireRequest{Key: "max", Owner: leasehold.NewOwnerID(), TTL: 15 * time.Second})
	wantExhausted(t, "another owner after the refusal", "max", err)
	if body, _ := get(t, s, s.CounterObject("max")); body != counterBody("max", math.MaxUint64) {
		t.Fatalf("the planted counter was changed to %q", body)
	}

	// One below it: the largest token is granted once, then no more.
	put(t, s, s.CounterObject("near"), counterBody("near", math.MaxUint64-1))
	g := acquire(t, s, "near")
	if g.Token != math.MaxUint64 {
		t.Fatalf("counter at 2^64-2: token %d, want 2^64-1", g.Token)
	}
	release(t, s, g)
	_, err = s.Acquire(ctxT(t), req("near"))
	wantExhausted(t, "after the token 2^64-1", "near", err)

	// A tombstone at the largest token, the counter lower (or deleted).
	g = acquire(t, s, "tomb")
	release(t, s, g)
	put(t, s, s.LeaseObject("tomb"), tombBody("tomb", math.MaxUint64))
	_, err = s.Acquire(ctxT(t), req("tomb"))
	wantExhausted(t, "tombstone at 2^64-1", "tomb", err)
	if _, err := s.Holder(ctxT(t), "tomb"); !errors.Is(err, leasehold.ErrNotHeld) {
		t.Fatalf("after a refused acquire, Holder: %v, want ErrNotHeld", err)
	}

	// Repaired (the planted counter deleted), the key is granted again,
	// with a token above every one granted before.
	del(t, s, s.CounterObject("max"))
	if g := acquire(t, s, "max"); g.Token == 0 || g.Token == math.MaxUint64 {
		t.Fatalf("after the repair: token %d", g.Token)
	}
}

// testPlanted plants lease and counter objects whose fields are out of
// range, negative, unparsable or missing: each is refused as foreign,
// naming the object, and left alone. A planted lease with a huge ttl_ms
// (whose expiry once overflowed, holding the key forever) is one of them.
func testPlanted(t *testing.T, v *testserver.Versity) {
	s := open(t, v, "planted")
	lease := func(ttl, tok string) string {
		return `{"leasehold":1,"kind":"lease","key":"k","owner":"` + plantOwner + `","token":` + tok + `,"ttl_ms":` + ttl + `,"write":"` + plantWrite + `"}`
	}
	for _, c := range []struct{ what, obj, body, reason string }{
		{"huge ttl_ms", "lease", lease("9223372036854775807", "5"), "ttl_ms"},
		{"ttl_ms above the maximum", "lease", lease("86400001", "5"), "ttl_ms"},
		{"negative ttl_ms", "lease", lease("-15000", "5"), "ttl_ms"},
		{"lease without ttl_ms", "lease", strings.Replace(lease("0", "5"), `"ttl_ms":0,`, "", 1), "ttl_ms"},
		{"token 0", "lease", lease("15000", "0"), "token"},
		{"negative token", "lease", lease("15000", "-1"), "token"},
		{"token above 2^64-1", "lease", lease("15000", "18446744073709551616"), "token"},
		{"lease without owner", "lease", strings.Replace(lease("15000", "5"), `"owner":"`+plantOwner+`",`, "", 1), "owner"},
		{"counter with a ttl", "counter", `{"leasehold":1,"kind":"counter","key":"k","token":5,"ttl_ms":15000,"write":"` + plantWrite + `"}`, "ttl_ms"},
		{"counter token 0", "counter", counterBody("k", 0), "token"},
		{"ceiling below the token", "lease", strings.Replace(lease("15000", "5"), `"write"`, `"ceiling":4,"write"`, 1), "ceiling"},
		{"counter with a ceiling", "counter", `{"leasehold":1,"kind":"counter","key":"k","token":5,"ceiling":9,"write":"` + plantWrite + `"}`, "ceiling"},
		{"counter token a string", "counter", `{"leasehold":1,"kind":"counter","key":"k","token":"9","write":"` + plantWrite + `"}`, "token"},
	} {
		name := s.LeaseObject("k")
		if c.obj == "counter" {
			// Without the lease object (its ceiling would cover the next
			// token) the acquire reads the counter.
			del(t, s, name)
			name = s.CounterObject("k")
		}
		put(t, s, name, c.body)
		req := leasehold.AcquireRequest{Key: "k", Owner: leasehold.NewOwnerID(), TTL: 15 * time.Second}
		_, err := s.Acquire(ctxT(t), req)
		wantForeign(t, c.what+": acquire", err, name, c.reason)
		if c.obj == "lease" {
			_, err = s.Holder(ctxT(t), "k")
			wantForeign(t, c.what+": Holder", err, name, c.reason)
		}
		if body, _ := get(t, s, name); body != c.body {
			t.Errorf("%s: the planted object was changed to %q", c.what, body)
		}
		del(t, s, name)
		release(t, s, acquire(t, s, "k")) // the key works once it is gone
	}
}

// wantForeign checks that err is a store error around a
// *leasehold.ForeignRecordError naming object, whose reason names reason.
func wantForeign(t *testing.T, what string, err error, object, reason string) {
	t.Helper()
	var fe *leasehold.ForeignRecordError
	if !errors.As(err, &fe) || !errors.Is(err, leasehold.ErrStore) || !errors.Is(err, leasehold.ErrForeignRecord) {
		t.Fatalf("%s: %v; want a store error around a ForeignRecordError", what, err)
	}
	if fe.Object != object || !strings.Contains(fe.Reason, reason) {
		t.Fatalf("%s: object %q reason %q; want object %q, a reason naming %q", what, fe.Object, fe.Reason, object, reason)
	}
}
