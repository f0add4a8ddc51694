package postgres

import (
	"errors"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/leasehold-go/leasehold"
)

func TestLeaseRemaining(t *testing.T) {
	for _, c := range []struct {
		sec  float64
		want time.Duration
		ok   bool
		why  string
	}{
		{1.5, 1500 * time.Millisecond, true, ""},
		{86400, 24 * time.Hour, true, ""},
		{2 * 86400, 48 * time.Hour, true, ""},
		{0, 0, false, ""},
		{-3, 0, false, ""},
		{1e-10, 0, false, ""},
		{2*86400 + 1, 0, false, "beyond the longest lease"},
		{9.4e10, 0, false, "beyond the longest lease"},
		{math.Inf(1), 0, false, "seconds away"},
		{math.Inf(-1), 0, false, "seconds away"},
		{math.NaN(), 0, false, "seconds away"},
	} {
		d, ok, err := leaseRemaining("row", c.sec)
		if d != c.want || ok != c.ok || (err == nil) != (c.why == "") || err != nil && !strings.Contains(err.Error(), c.why) {
			t.Errorf("leaseRemaining(%v) = %s, %v, %v; want %s, %v, %q", c.sec, d, ok, err, c.want, c.ok, c.why)
		}
	}
}

func TestRowHeldOrRefused(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	for _, c := range []struct {
		name   string
		r      rowState
		target error
		why    string
	}{
		{"missing", rowState{}, leasehold.ErrHeld, ""},
		{"held", rowState{found: true, owned: true, token: 5, remaining: f(10)}, leasehold.ErrHeld, ""},
		{"raced free", rowState{found: true, token: 5}, leasehold.ErrHeld, ""},
		{"held at the limit", rowState{found: true, owned: true, token: math.MaxInt64, remaining: f(10)}, leasehold.ErrHeld, ""},
		{"free at the limit", rowState{found: true, token: math.MaxInt64}, leasehold.ErrTokensExhausted, "largest bigint"},
		{"expired at the limit", rowState{found: true, owned: true, token: math.MaxInt64, remaining: f(-1)}, leasehold.ErrTokensExhausted, ""},
		{"negative", rowState{found: true, token: -5}, leasehold.ErrForeignRecord, "token -5 is not positive"},
		{"zero", rowState{found: true, token: 0}, leasehold.ErrForeignRecord, "not positive"},
		{"owner without expiry", rowState{found: true, owned: true, token: 5}, leasehold.ErrForeignRecord, "no expires_at"},
		{"infinity", rowState{found: true, owned: true, token: 5, remaining: f(math.Inf(1))}, leasehold.ErrForeignRecord, "seconds away"},
		{"year 5000", rowState{found: true, owned: true, token: 5, remaining: f(9.4e10)}, leasehold.ErrForeignRecord, "beyond"},
	} {
		err := c.r.heldOrRefused("row k", "k")
		if !errors.Is(err, c.target) || !strings.Contains(err.Error(), c.why) {
			t.Errorf("%s: %v, want %v saying %q", c.name, err, c.target, c.why)
		}
		var fe *leasehold.ForeignRecordError
		if errors.Is(err, leasehold.ErrForeignRecord) && (!errors.As(err, &fe) || fe.Object != "row k") {
			t.Errorf("%s: %v does not name the row", c.name, err)
		}
	}
}

func TestParseHolderApp(t *testing.T) {
	for _, c := range []struct {
		app  string
		ours bool
		why  string
		want holderApp
	}{
		{"lh1 abcd 5 1000 a label", true, "", holderApp{check: "abcd", token: 5, expiryMS: 1000, label: "a label"}},
		{"lh1 abcd 5 1000", true, "", holderApp{check: "abcd", token: 5, expiryMS: 1000}},
		{"psql", false, "", holderApp{}},
		{"", false, "", holderApp{}},
		{"lh1x 1 2 3", false, "", holderApp{}},
		{"lh1 abcd 5", true, "is not lh1", holderApp{}},
		{"lh1 abcd -5 1000 l", true, "not a positive bigint", holderApp{}},
		{"lh1 abcd 0 1000 l", true, "not a positive bigint", holderApp{}},
		{"lh1 abcd 05 1000 l", true, "not a positive bigint", holderApp{}},
		{"lh1 abcd 18446744073709551615 1000 l", true, "not a positive bigint", holderApp{}},
		{"lh1 abcd 5 -1 l", true, "not Unix milliseconds", holderApp{}},
		{"lh1 abcd 5 1e9 l", true, "not Unix milliseconds", holderApp{}},
	} {
		h, ours, err := parseHolderApp("lock 7", c.app)
		if h != c.want || ours != c.ours || (err == nil) != (c.why == "") || err != nil && !strings.Contains(err.Error(), c.why) {
			t.Errorf("parseHolderApp(%q) = %+v, %v, %v; want %+v, %v, %q", c.app, h, ours, err, c.want, c.ours, c.why)
		}
	}
	const exp = 1_700_000_000_000
	h := holderApp{token: 1, expiryMS: exp}
	for _, c := range []struct {
		now  int64
		want time.Duration
		bad  bool
	}{
		{exp - 1000, time.Second, false}, {exp, 0, false}, {exp + 1000, 0, false},
		{exp - 2*86_400_000, 48 * time.Hour, false}, {exp - 2*86_400_000 - 1, 0, true},
		{0, 0, true}, {-1, 0, true}, {math.MinInt64 + 5, 0, true}, {math.MaxInt64, 0, false},
	} {
		d, err := h.remaining("lock 7", c.now)
		if d != c.want || (err != nil) != c.bad {
			t.Errorf("remaining at %d = %s, %v; want %s, refused %v", c.now, d, err, c.want, c.bad)
		}
	}
}

// FuzzLeaseRow: whatever a lease row holds, an acquire that took nothing
// reports it held (with a token and a time left in range), at its token
// limit (a free row at the largest bigint), or foreign naming the row.
func FuzzLeaseRow(f *testing.F) {
	f.Add(true, int64(5), true, 10.0, "l")
	f.Add(false, int64(math.MaxInt64), false, 0.0, "")
	f.Add(false, int64(-5), false, 0.0, "")
	f.Add(true, int64(5), false, 0.0, "l")
	f.Add(true, int64(5), true, math.Inf(1), "l")
	f.Add(true, int64(5), true, 9.4e10, "l")
	f.Fuzz(func(t *testing.T, owned bool, token int64, hasRem bool, sec float64, label string) {
		r := rowState{found: true, owned: owned, label: label, token: token}
		if hasRem {
			r.remaining = &sec
		}
		err := r.heldOrRefused("row k", "k")
		var (
			he *leasehold.HeldError
			fe *leasehold.ForeignRecordError
		)
		switch {
		case errors.As(err, &he):
			if he.Key != "k" || he.Token != 0 && (he.Token != uint64(token) || he.Label != label || he.Remaining <= 0 || he.Remaining > maxAhead) {
				t.Fatalf("row %+v (%v s): %+v", r, sec, he)
			}
			if token < 1 {
				t.Fatalf("row %+v: held with token %d", r, token)
			}
		case errors.As(err, &fe):
			if fe.Object != "row k" || fe.Reason == "" {
				t.Fatalf("row %+v: %v", r, err)
			}
		case errors.Is(err, leasehold.ErrTokensExhausted):
			if token != math.MaxInt64 {
				t.Fatalf("row %+v: %v below the limit", r, err)
			}
		default:
			t.Fatalf("row %+v: %v", r, err)
		}
	})
}

// FuzzHolderApp: an application_name is not leasehold's, or foreign naming
// the lock, or a holder with a positive token that writes back to the same
// holder and has a time left in range.
func FuzzHolderApp(f *testing.F) {
	for _, s := range []string{"lh1 abcd 5 1000 label", "lh1 abcd 5 1000", "lh1 00000000 5 99999999999999 other", "lh1 x -5 0", "psql", ""} {
		f.Add(s, int64(1000))
	}
	f.Fuzz(func(t *testing.T, app string, nowMS int64) {
		h, ours, err := parseHolderApp("lock 7", app)
		if err != nil {
			var fe *leasehold.ForeignRecordError
			if !ours || !errors.As(err, &fe) || fe.Object != "lock 7" || !strings.Contains(fe.Reason, strconv.Quote(app)) {
				t.Fatalf("parseHolderApp(%q) = %v, %v", app, ours, err)
			}
			return
		}
		if ours != strings.HasPrefix(app+" ", "lh1 ") || !ours && h != (holderApp{}) {
			t.Fatalf("parseHolderApp(%q) = %+v, ours %v", app, h, ours)
		}
		if !ours {
			return
		}
		back := "lh1 " + h.check + " " + strconv.FormatUint(h.token, 10) + " " + strconv.FormatInt(h.expiryMS, 10) + " " + h.label
		h2, ours2, err := parseHolderApp("lock 7", back)
		if h.token < 1 || h2 != h || !ours2 || err != nil {
			t.Fatalf("parseHolderApp(%q) = %+v; written back %q reads %+v, %v", app, h, back, h2, err)
		}
		if d, err := h.remaining("lock 7", nowMS); err == nil && (d < 0 || d > maxAhead) {
			t.Fatalf("%+v at %d: remaining %s", h, nowMS, d)
		}
	})
}

// FuzzParseURL: any store URL is refused with an error that says it is the
// postgres store's, or accepted with a mode, a schema and a table that
// resolve to themselves, and a pool configuration.
func FuzzParseURL(f *testing.F) {
	for _, s := range []string{
		"postgres://u:p@127.0.0.1:5432/db", "postgresql://h/db?mode=advisory&schema=s&table=t",
		"postgres://h/db?mode=lease&cancel=close&listen=postgres://h2/db", "postgres://h/db?mode=x",
		"postgres://h/db?table=a.b", "redis://h", "postgres://%zz", "",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		opts, cfg, err := parseURL(raw)
		if err != nil {
			if cfg != nil || !strings.HasPrefix(err.Error(), "postgres") {
				t.Fatalf("parseURL(%q): config %v, error %v", raw, cfg, err)
			}
			return
		}
		again, err := opts.resolved()
		if cfg == nil || err != nil || again != opts || opts.Mode != LeaseRow && opts.Mode != Advisory || opts.Schema == "" || opts.Table == "" {
			t.Fatalf("parseURL(%q) = %+v, %v; resolved again: %+v, %v", raw, opts, cfg, again, err)
		}
	})
}
