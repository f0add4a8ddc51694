package azblob

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/lease"
	"github.com/leasehold-go/leasehold"
)

// wantForeign checks that err is a ForeignRecordError on name whose
// reason holds reason.
func wantForeign(t *testing.T, what string, err error, name, reason string) {
	t.Helper()
	var fe *leasehold.ForeignRecordError
	if !errors.As(err, &fe) || !errors.Is(err, leasehold.ErrForeignRecord) {
		t.Fatalf("%s: %v, want a ForeignRecordError", what, err)
	}
	if fe.Object != name || !strings.Contains(fe.Reason, reason) {
		t.Fatalf("%s: %q on %q, want a reason naming %q on %q", what, fe.Reason, fe.Object, reason, name)
	}
}

func md(kv ...string) map[string]*string {
	m := map[string]*string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = ptr(kv[i+1])
	}
	return m
}

func TestParseMeta(t *testing.T) {
	for _, c := range []struct {
		what    string
		m       map[string]*string
		counter bool
		tok     uint64
		label   string
		reason  string // "" when accepted
	}{
		{"stamped lease blob", md("leasehold", "1", "token", "42", "label", "x"), false, 42, "x", ""},
		{"names in any case", md("Leasehold", "1", "TOKEN", "42", "Label", "x"), false, 42, "x", ""},
		{"lease blob not stamped yet", md("leasehold", "1"), false, 0, "", ""},
		{"empty label", md("leasehold", "1", "token", "42", "label", ""), false, 42, "", ""},
		{"others' metadata left alone", md("leasehold", "1", "token", "42", "owner", "x"), false, 42, "", ""},
		{"largest token", md("leasehold", "1", "token", "18446744073709551615"), true, math.MaxUint64, "", ""},
		{"counter", md("leasehold", "1", "token", "7"), true, 7, "", ""},
		{"no metadata", nil, false, 0, "", `"leasehold" is ""`},
		{"mark 2", md("leasehold", "2", "token", "42"), false, 0, "", `"leasehold" is "2"`},
		{"name twice", md("token", "1", "Token", "2", "leasehold", "1"), false, 0, "", "twice"},
		{"nil value", map[string]*string{"leasehold": ptr("1"), "token": nil}, false, 0, "", "no value"},
		{"negative token", md("leasehold", "1", "token", "-1"), false, 0, "", `token "-1"`},
		{"token with a sign", md("leasehold", "1", "token", "+1"), false, 0, "", `token "+1"`},
		{"token past 2^64-1", md("leasehold", "1", "token", "18446744073709551616"), false, 0, "", "token"},
		{"token not a number", md("leasehold", "1", "token", "12a"), false, 0, "", "token"},
		{"empty token", md("leasehold", "1", "token", ""), false, 0, "", "token"},
		{"token 0", md("leasehold", "1", "token", "0"), false, 0, "", "token 0"},
		{"leading zeros", md("leasehold", "1", "token", "007"), false, 0, "", `token "007"`},
		{"label without token", md("leasehold", "1", "label", "x"), false, 0, "", "label"},
		{"counter without token", md("leasehold", "1"), true, 0, "", "without"},
		{"counter with label", md("leasehold", "1", "token", "7", "label", "x"), true, 0, "", "label"},
	} {
		tok, label, err := parseMeta("keys/k", c.m, c.counter)
		if c.reason == "" {
			if err != nil || tok != c.tok || label != c.label {
				t.Errorf("%s: %d, %q, %v; want %d, %q", c.what, tok, label, err, c.tok, c.label)
			}
			continue
		}
		wantForeign(t, c.what, err, "keys/k", c.reason)
	}
}

func TestParseBlob(t *testing.T) {
	now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	leased, odd := lease.StateTypeLeased, lease.StateType("borrowed")
	good := func() blob.GetPropertiesResponse {
		return blob.GetPropertiesResponse{Metadata: md("leasehold", "1", "token", "5"), ETag: ptr(azcore.ETag(`"0x1"`)), Date: &now, LeaseState: &leased}
	}
	p := good()
	if st, err := parseBlob("keys/k", &p, false); err != nil || st.token != 5 || !st.leased || st.etag != `"0x1"` || !st.date.Equal(now) {
		t.Fatalf("parseBlob: %+v, %v", st, err)
	}
	for _, c := range []struct {
		what   string
		change func(*blob.GetPropertiesResponse)
		reason string
	}{
		{"no ETag", func(p *blob.GetPropertiesResponse) { p.ETag = nil }, "ETag"},
		{"empty ETag", func(p *blob.GetPropertiesResponse) { p.ETag = ptr(azcore.ETag("")) }, "ETag"},
		{"no Date", func(p *blob.GetPropertiesResponse) { p.Date = nil }, "no Date"},
		{"Date in 1969", func(p *blob.GetPropertiesResponse) { p.Date = ptr(time.Unix(-1, 0).UTC()) }, "Date 1969"},
		{"Date in 1999", func(p *blob.GetPropertiesResponse) { p.Date = ptr(time.Date(1999, 12, 31, 0, 0, 0, 0, time.UTC)) }, "outside 2000"},
		{"no lease state", func(p *blob.GetPropertiesResponse) { p.LeaseState = nil }, "lease state"},
		{"unknown lease state", func(p *blob.GetPropertiesResponse) { p.LeaseState = &odd }, `"borrowed"`},
		{"bad metadata", func(p *blob.GetPropertiesResponse) { p.Metadata = md("leasehold", "1", "token", "-1") }, "token"},
	} {
		p := good()
		c.change(&p)
		_, err := parseBlob("keys/k", &p, false)
		wantForeign(t, c.what, err, "keys/k", c.reason)
	}
	for _, s := range []lease.StateType{lease.StateTypeAvailable, lease.StateTypeBreaking, lease.StateTypeBroken, lease.StateTypeExpired} {
		if held, err := parseLeaseState("keys/k", &s); held || err != nil {
			t.Errorf("lease state %s: held %v, %v", s, held, err)
		}
	}
}

func TestNextToken(t *testing.T) {
	now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	us := uint64(now.UnixMicro())
	for _, c := range []struct {
		last, counter uint64
		now           time.Time
		want          uint64
		ok            bool
	}{
		{0, 0, now, us, true}, // both blobs new or deleted: the clock floor
		{us + 5, 0, now, us + 6, true},
		{0, us + 5, now, us + 6, true},
		{3, 9, now, us, true},
		{math.MaxUint64 - 1, 0, now, math.MaxUint64, true},
		{0, math.MaxUint64, now, 0, false},
		{math.MaxUint64, 3, now, 0, false},
		{3, 0, time.Unix(-5, 0), 4, true},
	} {
		got, ok := nextToken(c.last, c.counter, c.now)
		if got != c.want || ok != c.ok {
			t.Errorf("nextToken(%d, %d, %v) = %d, %v; want %d, %v", c.last, c.counter, c.now, got, ok, c.want, c.ok)
		}
	}
}

func TestParseCeiling(t *testing.T) {
	for _, c := range []struct {
		what    string
		m       map[string]*string
		tok     uint64
		counter bool
		want    uint64
		reason  string // "" when accepted
	}{
		{"none", map[string]*string{}, 5, false, 0, ""},
		{"above the token", map[string]*string{"ceiling": ptr("1005")}, 5, false, 1005, ""},
		{"at the token", map[string]*string{"Ceiling": ptr("5")}, 5, false, 5, ""},
		{"below the token", map[string]*string{"ceiling": ptr("4")}, 5, false, 0, "below its token"},
		{"on a counter", map[string]*string{"ceiling": ptr("9")}, 5, true, 0, "counter blob"},
		{"without a token", map[string]*string{"ceiling": ptr("9")}, 0, false, 0, "without"},
		{"not a number", map[string]*string{"ceiling": ptr("x")}, 5, false, 0, "not a decimal"},
		{"leading zeros", map[string]*string{"ceiling": ptr("0009")}, 5, false, 0, "not written as the store writes it"},
	} {
		got, err := parseCeiling("keys/k", c.m, c.tok, c.counter)
		if c.reason == "" {
			if err != nil || got != c.want {
				t.Errorf("%s: %d, %v; want %d", c.what, got, err, c.want)
			}
			continue
		}
		var fe *leasehold.ForeignRecordError
		if !errors.As(err, &fe) || fe.Object != "keys/k" || !strings.Contains(fe.Reason, c.reason) {
			t.Errorf("%s: %v; want a ForeignRecordError on keys/k naming %q", c.what, err, c.reason)
		}
	}
}
