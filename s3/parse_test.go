package s3

import (
	"errors"
	"math"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/leasehold-go/leasehold"
)

const (
	testOwner = "0123456789abcdef0123456789abcdef"
	testWrite = "0123456789abcdef"
)

func leaseJSON(fields string) string {
	return `{"leasehold":1,"kind":"lease","key":"k","owner":"` + testOwner + `","write":"` + testWrite + `"` + fields + `}`
}

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

func TestParseRecord(t *testing.T) {
	lease := []string{kindLease, kindReleased}
	for _, c := range []struct {
		what, body string
		kinds      []string
		reason     string // "" when accepted
	}{
		{"lease", leaseJSON(`,"token":7,"label":"x","ttl_ms":15000`), lease, ""},
		{"shortest TTL", leaseJSON(`,"token":7,"ttl_ms":1000`), lease, ""},
		{"longest TTL", leaseJSON(`,"token":7,"ttl_ms":86400000`), lease, ""},
		{"largest token", leaseJSON(`,"token":18446744073709551615,"ttl_ms":1000`), lease, ""},
		{"tombstone", `{"leasehold":1,"kind":"released","key":"k","token":3,"write":"` + testWrite + `"}`, lease, ""},
		{"lease with a ceiling", leaseJSON(`,"token":7,"ttl_ms":15000,"ceiling":1007`), lease, ""},
		{"ceiling at the token", leaseJSON(`,"token":7,"ttl_ms":15000,"ceiling":7`), lease, ""},
		{"tombstone with a ceiling", `{"leasehold":1,"kind":"released","key":"k","token":3,"ceiling":9,"write":"` + testWrite + `"}`, lease, ""},
		{"ceiling below the token", leaseJSON(`,"token":7,"ttl_ms":15000,"ceiling":6`), lease, "ceiling 6 is below its token 7"},
		{"counter with a ceiling", `{"leasehold":1,"kind":"counter","key":"k","token":3,"ceiling":9,"write":"` + testWrite + `"}`, []string{kindCounter}, "a counter record with a ceiling"},
		{"negative ceiling", leaseJSON(`,"token":7,"ttl_ms":15000,"ceiling":-1`), lease, "not the store's JSON"},
		{"counter", `{"leasehold":1,"kind":"counter","key":"k","token":3,"write":"` + testWrite + `"}`, []string{kindCounter}, ""},
		{"not JSON", "not ours", lease, "not the store's JSON"},
		{"empty", "", lease, "not the store's JSON"},
		{"null", "null", lease, `"leasehold" is 0`},
		{"an array", "[1]", lease, "not the store's JSON"},
		{"trailing data", leaseJSON(`,"token":7,"ttl_ms":15000`) + "{}", lease, "data after"},
		{"unknown field", leaseJSON(`,"token":7,"ttl_ms":15000,"extra":1`), lease, "unknown field"},
		{"too large", leaseJSON(`,"token":7,"ttl_ms":15000,"label":"` + strings.Repeat("x", maxBody) + `"`), lease, "over"},
		{"format 2", strings.Replace(leaseJSON(`,"token":7,"ttl_ms":15000`), `"leasehold":1`, `"leasehold":2`, 1), lease, `"leasehold" is 2`},
		{"another key", strings.Replace(leaseJSON(`,"token":7,"ttl_ms":15000`), `"key":"k"`, `"key":"j"`, 1), lease, `key "j"`},
		{"counter where a lease belongs", `{"leasehold":1,"kind":"counter","key":"k","token":3,"write":"` + testWrite + `"}`, lease, `kind "counter"`},
		{"token 0", leaseJSON(`,"token":0,"ttl_ms":15000`), lease, "token 0"},
		{"no token", leaseJSON(`,"ttl_ms":15000`), lease, "token 0"},
		{"negative token", leaseJSON(`,"token":-1,"ttl_ms":15000`), lease, "token"},
		{"token past 2^64-1", leaseJSON(`,"token":18446744073709551616,"ttl_ms":15000`), lease, "token"},
		{"fractional token", leaseJSON(`,"token":1.5,"ttl_ms":15000`), lease, "token"},
		{"huge ttl_ms", leaseJSON(`,"token":7,"ttl_ms":9223372036854775807`), lease, "ttl_ms 9223372036854775807"},
		{"ttl_ms past int64", leaseJSON(`,"token":7,"ttl_ms":9223372036854775808`), lease, "ttl_ms"},
		{"ttl_ms above a day", leaseJSON(`,"token":7,"ttl_ms":86400001`), lease, "ttl_ms 86400001"},
		{"ttl_ms below a second", leaseJSON(`,"token":7,"ttl_ms":999`), lease, "ttl_ms 999"},
		{"negative ttl_ms", leaseJSON(`,"token":7,"ttl_ms":-1`), lease, "ttl_ms -1"},
		{"no ttl_ms", leaseJSON(`,"token":7`), lease, "ttl_ms 0"},
		{"no owner", strings.Replace(leaseJSON(`,"token":7,"ttl_ms":15000`), `"owner":"`+testOwner+`",`, "", 1), lease, "owner"},
		{"owner not hex", strings.Replace(leaseJSON(`,"token":7,"ttl_ms":15000`), testOwner, strings.ToUpper(testOwner), 1), lease, "owner"},
		{"no write", strings.Replace(leaseJSON(`,"token":7,"ttl_ms":15000`), `,"write":"`+testWrite+`"`, "", 1), lease, "write"},
		{"tombstone with a ttl", `{"leasehold":1,"kind":"released","key":"k","token":3,"ttl_ms":5000,"write":"` + testWrite + `"}`, lease, "ttl_ms"},
		{"counter with an owner", `{"leasehold":1,"kind":"counter","key":"k","token":3,"owner":"` + testOwner + `","write":"` + testWrite + `"}`, []string{kindCounter}, "owner"},
	} {
		r, err := parseRecord("lh/keys/k", "k", []byte(c.body), c.kinds...)
		if c.reason == "" {
			if err != nil {
				t.Errorf("%s: %v", c.what, err)
			} else if back, err := parseRecord("lh/keys/k", "k", r.encode(), c.kinds...); err != nil || back != r {
				t.Errorf("%s: %+v does not round-trip: %+v, %v", c.what, r, back, err)
			}
			continue
		}
		wantForeign(t, c.what, err, "lh/keys/k", c.reason)
	}
}

func TestParseObject(t *testing.T) {
	body := []byte(leaseJSON(`,"token":7,"ttl_ms":15000`))
	now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	etag := `"e"`
	for _, c := range []struct {
		what   string
		etag   *string
		lm     *time.Time
		reason string // "" when accepted; "version" for errNoVersion
	}{
		{"fresh", &etag, &now, ""},
		{"a second ahead of Date", &etag, ptr(now.Add(time.Second)), ""},
		{"no ETag", nil, &now, "version"},
		{"empty ETag", ptr(""), &now, "version"},
		{"no Last-Modified", &etag, nil, "version"},
		{"Last-Modified in 1969", &etag, ptr(time.Unix(-1, 0)), "Last-Modified 1969"},
		{"Last-Modified far after Date", &etag, ptr(now.Add(25 * time.Hour)), "after the server's Date"},
		{"Last-Modified in year 10000", &etag, ptr(time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)), "Last-Modified"},
	} {
		o, err := parseObject("lh/keys/k", "k", body, c.etag, c.lm, now, kindLease)
		switch c.reason {
		case "":
			if err != nil || o.rec.Token != 7 || o.etag != etag || !o.heldAt(now) {
				t.Errorf("%s: %+v, %v", c.what, o, err)
			}
		case "version":
			if !errors.Is(err, errNoVersion) {
				t.Errorf("%s: %v, want errNoVersion", c.what, err)
			}
		default:
			wantForeign(t, c.what, err, "lh/keys/k", c.reason)
		}
	}
}

func ptr[T any](v T) *T { return &v }

func TestServerDate(t *testing.T) {
	for _, c := range []struct{ date, reason string }{
		{"Thu, 26 Nov 2026 22:50:00 GMT", ""},
		{"Sat, 01 Jan 2000 00:00:00 GMT", ""},
		{"", "no Date"},
		{"yesterday", "not an HTTP date"},
		{"Wed, 31 Dec 1969 23:59:59 GMT", "outside 2000"},
		{"Fri, 31 Dec 1999 23:59:59 GMT", "outside 2000"},
	} {
		h := http.Header{}
		if c.date != "" {
			h.Set("Date", c.date)
		}
		now, err := serverDate("lh/keys/k", h)
		switch c.reason {
		case "":
			if err != nil || now.Format(http.TimeFormat) != c.date {
				t.Errorf("Date %q: %v, %v", c.date, now, err)
			}
		case "no Date":
			if !errors.Is(err, errNoDate) {
				t.Errorf("no Date: %v, want errNoDate", err)
			}
		default:
			wantForeign(t, "Date "+c.date, err, "lh/keys/k", c.reason)
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
		{0, 0, now, us, true},
		{us + 5, 0, now, us + 6, true},
		{0, us + 5, now, us + 6, true},
		{us - 5, us - 9, now, us, true},
		{math.MaxUint64 - 1, 0, now, math.MaxUint64, true},
		{0, math.MaxUint64 - 1, now, math.MaxUint64, true},
		{math.MaxUint64, 0, now, 0, false},
		{0, math.MaxUint64, now, 0, false},
		{math.MaxUint64, math.MaxUint64, now, 0, false},
		{3, 0, time.Unix(-5, 0), 4, true}, // a time before 1970 never wraps
	} {
		got, ok := nextToken(c.last, c.counter, c.now)
		if got != c.want || ok != c.ok {
			t.Errorf("nextToken(%d, %d, %v) = %d, %v; want %d, %v", c.last, c.counter, c.now, got, ok, c.want, c.ok)
		}
	}
}
