package dynamodb

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/leasehold-go/leasehold"
)

// wantRefusal checks that err, a refusal of an item read from object, is
// a ForeignRecordError naming the object with a reason.
func wantRefusal(t *testing.T, err error, object string) {
	t.Helper()
	var fe *leasehold.ForeignRecordError
	if !errors.As(err, &fe) || fe.Object != object || fe.Reason == "" || !errors.Is(err, leasehold.ErrForeignRecord) {
		t.Fatalf("refusal %v is not a ForeignRecordError on %q with a reason", err, object)
	}
}

// fuzzItem builds the attributes of an item as a read could bring them
// back: each of the store's attributes (and one more, extra) present or
// not (bit 2i of mask), a number or a string (bit 2i+1), with the value
// given.
func fuzzItem(mask uint32, vals []string, extra string) map[string]types.AttributeValue {
	names := append(append([]string(nil), heldAttrs...), extra)
	m := map[string]types.AttributeValue{}
	for i, name := range names {
		if mask&(1<<(2*i)) != 0 || name == "" {
			continue
		}
		if mask&(1<<(2*i+1)) != 0 {
			m[name] = num(vals[i])
		} else {
			m[name] = str(vals[i])
		}
	}
	return m
}

// The masks of fuzzItem for the store's held item (key S, leasehold N,
// state S, token N, version S, owner S, ttl_ms N, deadline_us N, label S,
// no extra) and free item (no owner, ttl_ms, deadline_us or label).
const (
	heldMask = uint32(1<<3 | 1<<7 | 1<<13 | 1<<15 | 1<<18)
	freeMask = heldMask | 1<<10 | 1<<12 | 1<<14 | 1<<16
)

// TestFuzzMasks checks that the seeds' masks build the store's items.
func TestFuzzMasks(t *testing.T) {
	vals := []string{"k", "1", "held", "7", "0123456789abcdef", "0123456789abcdef0123456789abcdef", "15000", "1795733400000000", "l", ""}
	if _, err := parseItem("o", "k", fuzzItem(heldMask, vals, "x")); err != nil {
		t.Fatalf("held: %v", err)
	}
	vals[2] = "free"
	if _, err := parseItem("o", "k", fuzzItem(freeMask, vals, "x")); err != nil {
		t.Fatalf("free: %v", err)
	}
	if _, err := parseItem("o", "k", fuzzItem(freeMask&^(1<<18), vals, "x")); err == nil {
		t.Fatal("an extra attribute was accepted")
	}
}

// FuzzParseItem feeds what a read of a key's item could bring back to the
// parser the store uses. Whatever is accepted is in range (so that the
// expiry and token arithmetic on it cannot overflow) and re-encodes to
// the same attributes; whatever is refused is a ForeignRecordError naming
// the item.
func FuzzParseItem(f *testing.F) {
	const held, free = heldMask, freeMask
	f.Add(held, "k", "1", "held", "7", "0123456789abcdef", "0123456789abcdef0123456789abcdef", "15000", "1795733400000000", "label", "")
	f.Add(free, "k", "1", "free", "18446744073709551615", "0123456789abcdef", "", "", "", "", "")
	f.Add(held, "k", "1", "held", "7", "0123456789abcdef", "0123456789abcdef0123456789abcdef", "9223372036854775807", "1", "", "")
	f.Add(held, "k", "1", "held", "-1", "0123456789abcdef", "0123456789abcdef0123456789abcdef", "15000", "1e3", "", "")
	f.Add(uint32(0), "other", "2", "locked", "1.5", "XYZ", "owner", "0", "99999999999999999999", "", "extra")
	f.Fuzz(func(t *testing.T, mask uint32, key, format, state, tok, version, owner, ttl, deadline, label, extra string) {
		const object = `table t item key="k"`
		m := fuzzItem(mask, []string{key, format, state, tok, version, owner, ttl, deadline, label, ""}, extra)
		it, err := parseItem(object, "k", m)
		if err != nil {
			wantRefusal(t, err, object)
			return
		}
		if it == nil {
			t.Fatalf("no item from %v", m)
		}
		checkItem(t, it)
		back, err := parseItem(object, "k", it.encode("k"))
		if err != nil || *back != *it {
			t.Fatalf("%+v re-encoded reads back as %+v, %v", it, back, err)
		}
	})
}

// checkItem checks that the arithmetic on an accepted item is in range.
func checkItem(t *testing.T, it *item) {
	t.Helper()
	if it.Token == 0 || (it.State != stateHeld && it.State != stateFree) || !isHex(it.Version, versionLen) {
		t.Fatalf("accepted %+v", it)
	}
	if tok, ok := nextToken(it.Token, time.Now()); ok != (it.Token < math.MaxUint64) || ok && tok <= it.Token {
		t.Fatalf("after token %d: next %d, %v", it.Token, tok, ok)
	}
	if !it.isHeld() {
		if it.Owner != "" || it.TTLms != 0 || it.DeadlineUs != 0 || it.Label != "" {
			t.Fatalf("a free item with held fields: %+v", it)
		}
		return
	}
	if ttl := it.ttl(); ttl < MinTTL || ttl > MaxTTL || !isHex(it.Owner, ownerLen) {
		t.Fatalf("accepted held item %+v", it)
	}
	if dl := it.deadline().Add(MaxSkewLimit); dl.Before(time.Unix(0, 0)) || dl.UnixMicro() < it.DeadlineUs {
		t.Fatalf("deadline %d µs plus the skew bound overflows: %v", it.DeadlineUs, dl)
	}
}

// FuzzItemRoundTrip builds the items the store writes from any key,
// owner, label, token, TTL and clock it could be given: each reads back as
// written, through the parser that reads the server's answers.
func FuzzItemRoundTrip(f *testing.F) {
	f.Add("k", "owner-1", "label", uint64(1), int64(15000), int64(1795733400000000))
	f.Add("reports/x", "o", "", uint64(math.MaxUint64), int64(1000), int64(0))
	f.Add(strings.Repeat("k", 1024), "o", "ünïcode", uint64(1795733400000000), int64(86400000), int64(1)<<59)
	f.Fuzz(func(t *testing.T, key, owner, label string, tok uint64, ttlMs, nowUs int64) {
		ttl := time.Duration(ttlMs) * time.Millisecond
		if leasehold.ValidateKey(key) != nil || tok == 0 || ttlMs < minTTLms || ttlMs > maxTTLms || nowUs < 0 || nowUs > maxDeadline-maxTTLms*1000 ||
			!utf8.ValidString(label) || len(label) > maxLabel {
			return // not a grant the store makes (DynamoDB strings are UTF-8)
		}
		object := `table t item key="` + key + `"`
		held := heldItem(owner, label, tok, ttl, time.UnixMicro(nowUs))
		free := item{Token: tok, State: stateFree, Version: nonce()}
		for _, it := range []item{held, free} {
			back, err := parseItem(object, key, it.encode(key))
			if err != nil || *back != it {
				t.Fatalf("%+v reads back as %+v, %v", it, back, err)
			}
			checkItem(t, back)
		}
	})
}

// FuzzCheckURL: CheckURL never panics; an accepted URL names a table of
// the characters and length DynamoDB allows, a skew bound in range, and
// credentials that go together; a refusal names the store.
func FuzzCheckURL(f *testing.F) {
	for _, u := range []string{
		"dynamodb://leases", "dynamodb://leases?endpoint=http://127.0.0.1:4567&region=eu-west-1&max_skew=500ms",
		"dynamodb://leases?access_key=a&secret_key=s&session_token=t", "dynamodb://", "dynamodb://user@leases",
		"dynamodb://leases?nosuch=1", "dynamodb://t%2Fx", "dynamodb://leases?max_skew=-1s", "dynamodb://leases/x",
		"dynamodb://leases?endpoint=127.0.0.1:4567", "dynamodb://leases?max_skew=1h0m0.000000001s",
	} {
		f.Add(u)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		c, err := parseURL(raw)
		if err != nil {
			if CheckURL(raw) == nil || !strings.Contains(err.Error(), "dynamodb store") {
				t.Fatalf("%q: refusal %v does not name the store", raw, err)
			}
			return
		}
		if CheckURL(raw) != nil {
			t.Fatalf("%q: parsed but CheckURL refuses it", raw)
		}
		if len(c.table) < 3 || len(c.table) > 255 || strings.Trim(c.table, tableChars) != "" {
			t.Fatalf("%q: accepted table %q", raw, c.table)
		}
		if c.skew < 0 || c.skew > MaxSkewLimit || (c.access == "") != (c.secret == "") || (c.session != "" && c.access == "") {
			t.Fatalf("%q: accepted %+v", raw, c)
		}
	})
}
