package sqlite

import (
	"database/sql"
	"errors"
	"math"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/leasehold-go/leasehold"
)

func TestCheckRow(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	n := now.UnixNano()
	for _, c := range []struct {
		name string
		r    leaseRow
		why  string
	}{
		{"held", leaseRow{token: 5, owned: true, expires: n + int64(time.Minute)}, ""},
		{"free", leaseRow{token: 5}, ""},
		{"expired", leaseRow{token: 5, owned: true, expires: n - 1}, ""},
		{"at the limit of time", leaseRow{token: 5, owned: true, expires: n + int64(maxAhead)}, ""},
		{"largest token", leaseRow{token: math.MaxInt64}, ""},
		{"free with a far expiry", leaseRow{token: 5, expires: math.MaxInt64}, ""},
		{"zero token", leaseRow{token: 0}, "token 0 is not positive"},
		{"negative token", leaseRow{token: -5, owned: true, expires: n + 1}, "token -5 is not positive"},
		{"past the limit of time", leaseRow{token: 5, owned: true, expires: n + int64(maxAhead) + 1}, "beyond the longest lease"},
		{"expires at the end of time", leaseRow{token: 5, owned: true, expires: math.MaxInt64}, "beyond the longest lease"},
	} {
		err := checkRow("row k", c.r, now)
		if (err == nil) != (c.why == "") || err != nil && !strings.Contains(err.Error(), c.why) {
			t.Errorf("%s: %v, want %q", c.name, err, c.why)
		}
		var fe *leasehold.ForeignRecordError
		if err != nil && (!errors.As(err, &fe) || fe.Object != "row k") {
			t.Errorf("%s: %v is not a ForeignRecordError naming the row", c.name, err)
		}
	}
	if tok, err := nextToken("k", math.MaxInt64-1); err != nil || tok != math.MaxInt64 {
		t.Errorf("nextToken(2^63-2) = %d, %v", tok, err)
	}
	if _, err := nextToken("k", math.MaxInt64); !errors.Is(err, leasehold.ErrTokensExhausted) {
		t.Errorf("nextToken(2^63-1): %v, want ErrTokensExhausted", err)
	}
}

// plant runs stmt on the store's file through a connection of its own, as
// an adversary would, with the CHECK constraints off.
func plant(t *testing.T, path, stmt string, args ...any) {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	if _, err := db.ExecContext(ctxT(t), "PRAGMA ignore_check_constraints = ON"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctxT(t), stmt, args...); err != nil {
		t.Fatalf("%s: %v", stmt, err)
	}
}

// A row whose token was set to the largest INTEGER refuses the grant with
// ErrTokensExhausted inside a StoreError and stays free and unchanged; the
// row just below grants the largest token once.
func TestTokensExhausted(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.db")
	s := openT(t, path, nil)
	for _, k := range []string{"full", "last"} {
		g, err := s.Acquire(ctxT(t), req(k, time.Minute))
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Release(ctxT(t), g); err != nil {
			t.Fatal(err)
		}
	}
	plant(t, path, "UPDATE leasehold_leases SET token = CASE key WHEN 'full' THEN 9223372036854775807 ELSE 9223372036854775806 END")
	g, err := s.Acquire(ctxT(t), req("full", time.Minute))
	var se *leasehold.StoreError
	if err == nil || !errors.As(err, &se) || !errors.Is(err, leasehold.ErrTokensExhausted) || !strings.Contains(err.Error(), `"full"`) {
		t.Fatalf("acquire at 2^63-1: %+v, %v; want a StoreError wrapping ErrTokensExhausted naming the key", g, err)
	}
	if _, err := s.Holder(ctxT(t), "full"); !errors.Is(err, leasehold.ErrNotHeld) {
		t.Fatalf("Holder after the refusal: %v, want ErrNotHeld", err)
	}
	g, err = s.Acquire(ctxT(t), req("last", time.Minute))
	if err != nil || g.Token != math.MaxInt64 {
		t.Fatalf("acquire at 2^63-2: %+v, %v; want token 2^63-1", g, err)
	}
	if err := s.Release(ctxT(t), g); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Acquire(ctxT(t), req("last", time.Minute)); !errors.Is(err, leasehold.ErrTokensExhausted) {
		t.Fatalf("acquire after token 2^63-1: %v, want ErrTokensExhausted", err)
	}
}

// Planted rows are refused as foreign records naming the row: a held row
// with a negative token (the old code reported its holder with token
// 2^64-5) and one expiring at the end of time (reported as held for 237
// years).
func TestPlantedRows(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.db")
	s := openT(t, path, nil)
	soon := time.Now().Add(time.Minute).UnixNano()
	plant(t, path, "INSERT INTO leasehold_leases (key, token, owner, label, expires) VALUES ('negative', -5, 'x', 'l', ?1), ('forever', 5, 'x', 'l', 9223372036854775807), ('free', -1, NULL, '', 0)", soon)
	for _, c := range []struct {
		key    string
		holder bool
	}{{"negative", true}, {"forever", true}, {"free", false}} {
		wantForeign := func(what string, err error) {
			t.Helper()
			var (
				se *leasehold.StoreError
				fe *leasehold.ForeignRecordError
			)
			if !errors.As(err, &se) || !errors.As(err, &fe) || !strings.Contains(fe.Object, `"`+c.key+`"`) || !strings.Contains(fe.Object, path) {
				t.Errorf("%s of row %s: %v, want a StoreError with a ForeignRecordError naming the row", what, c.key, err)
			}
		}
		g, err := s.Acquire(ctxT(t), req(c.key, time.Minute))
		if err == nil {
			t.Errorf("row %s: granted token %d", c.key, g.Token)
		}
		wantForeign("acquire", err)
		if c.holder {
			_, err := s.Holder(ctxT(t), c.key)
			wantForeign("holder", err)
		}
	}
	if _, err := s.List(ctxT(t), "for"); !errors.Is(err, leasehold.ErrForeignRecord) {
		t.Errorf("List over a planted row: %v, want ErrForeignRecord", err)
	}
}

// FuzzLeaseRow: a row read back is accepted with a positive token and, when
// held, a time left within the longest lease, or refused as a
// ForeignRecordError naming the row.
func FuzzLeaseRow(f *testing.F) {
	now := time.Unix(1_700_000_000, 0)
	f.Add(int64(5), true, now.Add(time.Minute).UnixNano())
	f.Add(int64(-5), true, now.Add(time.Minute).UnixNano())
	f.Add(int64(5), true, int64(math.MaxInt64))
	f.Add(int64(math.MaxInt64), false, int64(0))
	f.Fuzz(func(t *testing.T, token int64, owned bool, expires int64) {
		r := leaseRow{token: token, owned: owned, expires: expires}
		err := checkRow("row k", r, now)
		if err != nil {
			var fe *leasehold.ForeignRecordError
			if !errors.As(err, &fe) || fe.Object != "row k" || fe.Reason == "" {
				t.Fatalf("%+v: %v", r, err)
			}
			return
		}
		if token < 1 || owned && expires > now.UnixNano() && time.Duration(expires-now.UnixNano()) > maxAhead {
			t.Fatalf("%+v accepted", r)
		}
		if next, err := nextToken("k", token); err == nil && next <= token || err != nil && token != math.MaxInt64 {
			t.Fatalf("nextToken(%d) = %d, %v", token, next, err)
		}
	})
}
