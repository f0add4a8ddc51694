package azblob

import (
	"errors"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/lease"
	"github.com/leasehold-go/leasehold"
)

// wantRefusal checks that err, a refusal of a value read from blob name,
// is a ForeignRecordError naming the blob with a reason.
func wantRefusal(t *testing.T, err error, name string) {
	t.Helper()
	var fe *leasehold.ForeignRecordError
	if !errors.As(err, &fe) || fe.Object != name || fe.Reason == "" {
		t.Fatalf("refusal %v is not a ForeignRecordError on %q with a reason", err, name)
	}
}

// FuzzParseMeta feeds the metadata a read of a lease or counter blob
// could bring back to parseMeta. Whatever is accepted is what the store
// writes (the mark, a token from 1 written as FormatUint writes it, a
// label only with a token and only on a lease blob), its next token is
// above it or exhausted, and the metadata the store would write for it
// reads back the same; whatever is refused is a ForeignRecordError naming
// the blob.
func FuzzParseMeta(f *testing.F) {
	f.Add("1", "42", "label", true, true, false, "", "")
	f.Add("1", "18446744073709551615", "", true, false, true, "", "")
	f.Add("1", "", "", false, false, false, "owner", "x")
	f.Add("1", "-1", "", true, false, false, "", "")
	f.Add("1", "007", "x", true, true, false, "TOKEN", "8")
	f.Add("2", "18446744073709551616", "", true, false, true, "", "")
	f.Fuzz(func(t *testing.T, mark, token, label string, hasToken, hasLabel, counter bool, extra, extraValue string) {
		name := "keys/k"
		if counter {
			name = "tokens/k"
		}
		m := map[string]*string{metaMark: &mark}
		if hasToken {
			m[metaToken] = &token
		}
		if hasLabel {
			m[metaLabel] = &label
		}
		if extra != "" {
			m[extra] = &extraValue
		}
		tok, got, err := parseMeta(name, m, counter)
		if err != nil {
			wantRefusal(t, err, name)
			return
		}
		eff := map[string]string{} // what was given, by name without case
		for k, v := range m {
			eff[strings.ToLower(k)] = *v
		}
		wantTok, hasTok := eff[metaToken]
		switch {
		case eff[metaMark] != "1",
			hasTok != (tok != 0) || hasTok && wantTok != strconv.FormatUint(tok, 10),
			counter && (tok == 0 || got != ""),
			got != eff[metaLabel]:
			t.Fatalf("accepted %v as token %d label %q", eff, tok, got)
		}
		if next, ok := nextToken(tok, 0, time.Unix(946684800, 0)); ok != (tok < math.MaxUint64) || ok && next <= tok {
			t.Fatalf("after token %d: next %d, %v", tok, next, ok)
		}
		if tok == 0 {
			return
		}
		s := strconv.FormatUint(tok, 10)
		back := map[string]*string{metaMark: ptr("1"), metaToken: &s}
		if !counter {
			back[metaLabel] = &got
		}
		if btok, blabel, err := parseMeta(name, back, counter); err != nil || btok != tok || blabel != got {
			t.Fatalf("token %d label %q written reads back as %d, %q, %v", tok, got, btok, blabel, err)
		}
	})
}

// FuzzCheckURL: CheckURL never panics; an accepted URL names an account,
// a container of one name component, an endpoint and a known auth; a
// refusal names the store.
func FuzzCheckURL(f *testing.F) {
	for _, u := range []string{
		"azblob://account/container", "azblob://devstoreaccount1/c?endpoint=http://127.0.0.1:10000/devstoreaccount1&auth=connstr",
		"azblob://a/c?auth=key&key=abc", "azblob://a/c?auth=sas&sas=sv%3D1", "azblob://a/c?auth=nope", "azblob://a/c/d",
		"azblob://a", "azblob:///c", "http://a/c", "azblob://a/%zz",
	} {
		f.Add(u)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		c, err := parseURL(raw)
		if err != nil {
			if CheckURL(raw) == nil || !strings.Contains(err.Error(), "azblob store") {
				t.Fatalf("%q: refusal %v does not name the store", raw, err)
			}
			return
		}
		if CheckURL(raw) != nil {
			t.Fatalf("%q: parsed but CheckURL refuses it", raw)
		}
		if c.account == "" || c.container == "" || strings.Contains(c.container, "/") || c.endpoint == "" {
			t.Fatalf("%q: accepted %+v", raw, c)
		}
		switch c.auth {
		case "connstr", "key", "sas", "default":
		default:
			t.Fatalf("%q: accepted auth %q", raw, c.auth)
		}
	})
}

// FuzzParseBlob feeds the rest of a read's answer (lease state, Date,
// ETag) to parseBlob: whatever is accepted has a Date from 2000 on, so
// the token floor (µs since 1970) cannot wrap, an ETag for the
// conditional writes, and is held exactly when the state is "leased";
// whatever is refused is a ForeignRecordError naming the blob.
func FuzzParseBlob(f *testing.F) {
	f.Add("leased", int64(1795733400), `"0x8DC"`, "5")
	f.Add("available", int64(946684800), `"0x8DC"`, "18446744073709551615")
	f.Add("borrowed", int64(-1), "", "5")
	f.Add("expired", int64(253402300800), `"e"`, "0")
	f.Fuzz(func(t *testing.T, state string, dateSec int64, etag, token string) {
		date := time.Unix(dateSec, 0).UTC()
		st := lease.StateType(state)
		e := azcore.ETag(etag)
		p := &blob.GetPropertiesResponse{Metadata: map[string]*string{metaMark: ptr("1"), metaToken: &token}, ETag: &e, Date: &date, LeaseState: &st}
		got, err := parseBlob("keys/k", p, false)
		if err != nil {
			wantRefusal(t, err, "keys/k")
			return
		}
		if got.date.Before(minServerTime) || got.etag == "" || got.leased != (state == "leased") || got.token == 0 {
			t.Fatalf("accepted %+v from state %q date %v etag %q token %q", got, state, date, etag, token)
		}
		if next, ok := nextToken(got.token, 0, got.date); ok && (next <= got.token || next < uint64(got.date.UnixMicro())) {
			t.Fatalf("after token %d at %v: next %d", got.token, got.date, next)
		}
	})
}

// FuzzParseCeiling feeds a lease or counter blob's token and ceiling
// metadata to parseBlob: an accepted ceiling is written as the store
// writes it, at or above the token, and only on a lease blob with a
// token; whatever is refused is a ForeignRecordError naming the blob.
func FuzzParseCeiling(f *testing.F) {
	f.Add("5", "1005", false)
	f.Add("5", "4", false)
	f.Add("5", "9", true)
	f.Add("18446744073709551615", "18446744073709551615", false)
	f.Add("5", "0009", false)
	f.Fuzz(func(t *testing.T, token, ceiling string, counter bool) {
		name := "keys/k"
		if counter {
			name = "tokens/k"
		}
		date := time.Unix(1795733400, 0).UTC()
		st := lease.StateTypeAvailable
		e := azcore.ETag(`"0x1"`)
		p := &blob.GetPropertiesResponse{Metadata: map[string]*string{metaMark: ptr("1"), metaToken: &token, metaCeiling: &ceiling}, ETag: &e, Date: &date, LeaseState: &st}
		got, err := parseBlob(name, p, counter)
		if err != nil {
			wantRefusal(t, err, name)
			return
		}
		if counter || got.ceiling < got.token || strconv.FormatUint(got.ceiling, 10) != ceiling {
			t.Fatalf("accepted ceiling %q with token %q (counter %v) as %+v", ceiling, token, counter, got)
		}
	})
}
