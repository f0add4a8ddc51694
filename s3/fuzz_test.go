package s3

import (
	"errors"
	"math"
	"net/http"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/leasehold-go/leasehold"
)

// wantRefusal checks that err, a refusal of a value read from object
// name, is a ForeignRecordError naming the object with a reason.
func wantRefusal(t *testing.T, err error, name string) {
	t.Helper()
	var fe *leasehold.ForeignRecordError
	if !errors.As(err, &fe) || fe.Object != name || fe.Reason == "" {
		t.Fatalf("refusal %v is not a ForeignRecordError on %q with a reason", err, name)
	}
}

// FuzzParseObject feeds what a read of a lease or counter object could
// bring back (a body, a Date header, a Last-Modified) to the parsers the
// store uses. Whatever is accepted is in range, so that the expiry and
// token arithmetic on it cannot overflow (held exactly while time is
// left, at most the TTL left, the next token above it or exhausted), and
// re-encodes to the same record, and a ceiling is at or above the token
// and never on a counter; whatever is refused is a
// ForeignRecordError naming the object.
func FuzzParseObject(f *testing.F) {
	f.Add([]byte(leaseJSON(`,"token":7,"label":"x","ttl_ms":15000`)), true, "Thu, 26 Nov 2026 22:50:00 GMT", int64(1795733399))
	f.Add([]byte(leaseJSON(`,"token":7,"ttl_ms":9223372036854775807`)), true, "Thu, 26 Nov 2026 22:50:00 GMT", int64(1795733399))
	f.Add([]byte(leaseJSON(`,"token":18446744073709551615,"ttl_ms":86400000`)), true, "Sat, 01 Jan 2000 00:00:00 GMT", int64(946684800))
	f.Add([]byte(`{"leasehold":1,"kind":"released","key":"k","token":3,"write":"`+testWrite+`"}`), true, "Thu, 26 Nov 2026 22:50:00 GMT", int64(0))
	f.Add([]byte(`{"leasehold":1,"kind":"counter","key":"k","token":18446744073709551615,"write":"`+testWrite+`"}`), false, "Thu, 26 Nov 2026 22:50:00 GMT", int64(1795733400))
	f.Add([]byte("not ours"), false, "yesterday", int64(-1))
	f.Add([]byte(leaseJSON(`,"token":7,"ttl_ms":15000,"ceiling":1007`)), true, "Thu, 26 Nov 2026 22:50:00 GMT", int64(1795733399))
	f.Add([]byte(leaseJSON(`,"token":7,"ttl_ms":15000,"ceiling":6`)), true, "Thu, 26 Nov 2026 22:50:00 GMT", int64(1795733399))
	f.Fuzz(func(t *testing.T, body []byte, lease bool, date string, lmSec int64) {
		const name = "lh/keys/k"
		kinds := []string{kindCounter}
		if lease {
			kinds = []string{kindLease, kindReleased}
		}
		rec, err := parseRecord(name, "k", body, kinds...)
		if err != nil {
			wantRefusal(t, err, name)
		} else {
			if rec.Ceiling != 0 && (rec.Ceiling < rec.Token || rec.Kind == kindCounter) {
				t.Fatalf("accepted ceiling %d on a %s record with token %d", rec.Ceiling, rec.Kind, rec.Token)
			}
			back, err := parseRecord(name, "k", rec.encode(), kinds...)
			if err != nil || back != rec {
				t.Fatalf("%+v re-encoded reads back as %+v, %v", rec, back, err)
			}
		}
		now, err := serverDate(name, http.Header{"Date": {date}})
		if err != nil {
			if !errors.Is(err, errNoDate) {
				wantRefusal(t, err, name)
			}
			return
		}
		lm := time.Unix(lmSec, 0)
		o, err := parseObject(name, "k", body, ptr(`"e"`), &lm, now, kinds...)
		if err != nil {
			wantRefusal(t, err, name)
			return
		}
		checkArithmetic(t, o, now)
	})
}

// checkArithmetic checks that the expiry and token arithmetic on an
// accepted object is in range.
func checkArithmetic(t *testing.T, o *object, now time.Time) {
	t.Helper()
	if o.rec.Token == 0 || now.UnixMicro() <= 0 {
		t.Fatalf("accepted token %d at %v", o.rec.Token, now)
	}
	if tok, ok := nextToken(o.rec.Token, 0, now); ok != (o.rec.Token < math.MaxUint64) || ok && tok <= o.rec.Token {
		t.Fatalf("after token %d: next %d, %v", o.rec.Token, tok, ok)
	}
	if o.rec.Kind != kindLease {
		return
	}
	ttl := o.ttl()
	if ttl < MinTTL || ttl > MaxTTL {
		t.Fatalf("accepted TTL %v", ttl)
	}
	if d := o.expiry().Sub(o.lastModified); d <= ttl || d > ttl+time.Second {
		t.Fatalf("expiry %v after the write with TTL %v", d, ttl)
	}
	left := o.remaining(now)
	if left > ttl || o.heldAt(now) != (left > 0) {
		t.Fatalf("held %v with %v left of TTL %v", o.heldAt(now), left, ttl)
	}
}

// FuzzRecordRoundTrip builds the records the store writes from any key,
// owner, label, token and TTL it could be given: each reads back as
// written, through the parser that reads the server's answers.
func FuzzRecordRoundTrip(f *testing.F) {
	f.Add("k", "owner-1", "label", uint64(1), int64(15000))
	f.Add("reports/x", "o", "", uint64(math.MaxUint64), int64(1000))
	f.Add(strings.Repeat("k", 300), "o", "ünïcode", uint64(1795733400000000), int64(86400000))
	f.Fuzz(func(t *testing.T, key, owner, label string, tok uint64, ttlMs int64) {
		ttl := time.Duration(ttlMs) * time.Millisecond
		if leasehold.ValidateKey(key) != nil || tok == 0 || ttl < MinTTL || ttl > MaxTTL || ttlMs > int64(MaxTTL/time.Millisecond) ||
			!utf8.ValidString(key) || !utf8.ValidString(label) {
			return // not a grant the store makes (JSON carries text as UTF-8)
		}
		name := "lh/keys/" + objectName(key)
		for _, r := range []record{leaseRecord(key, owner, label, tok, ttl), tombstone(key, tok), counterRecord(key, tok)} {
			r.Write = nonce()
			back, err := parseRecord(name, key, r.encode(), r.Kind)
			if err != nil || back != r {
				t.Fatalf("%+v reads back as %+v, %v", r, back, err)
			}
		}
	})
}

// FuzzCheckURL: CheckURL never panics; an accepted URL names a bucket of
// the characters S3 allows and a prefix that ends in "/" (or none), and
// a refusal names the store.
func FuzzCheckURL(f *testing.F) {
	for _, u := range []string{
		"s3://bucket", "s3://bucket/prefix/deeper", "s3://b?endpoint=http://127.0.0.1:7070&region=eu-west-1",
		"s3://b?path_style=false&access_key=a&secret_key=s&session_token=t", "s3://", "s3://user@bucket",
		"s3://b?nosuch=1", "s3://b%2F", "s3://b?endpoint=127.0.0.1:7070", "s3://b/%zz",
	} {
		f.Add(u)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		c, err := parseURL(raw)
		if err != nil {
			if CheckURL(raw) == nil || !strings.Contains(err.Error(), "s3 store") {
				t.Fatalf("%q: refusal %v does not name the store", raw, err)
			}
			return
		}
		if CheckURL(raw) != nil {
			t.Fatalf("%q: parsed but CheckURL refuses it", raw)
		}
		if c.bucket == "" || strings.Trim(c.bucket, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-_") != "" {
			t.Fatalf("%q: accepted bucket %q", raw, c.bucket)
		}
		if c.prefix != "" && !strings.HasSuffix(c.prefix, "/") {
			t.Fatalf("%q: prefix %q does not end in /", raw, c.prefix)
		}
		if (c.access == "") != (c.secret == "") {
			t.Fatalf("%q: access key without secret or the reverse", raw)
		}
	})
}
