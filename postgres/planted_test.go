package postgres_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/postgres"
)

// wantForeign checks that err is a *leasehold.StoreError holding a
// *leasehold.ForeignRecordError whose Object holds object.
func wantForeign(t *testing.T, what string, err error, object string) {
	t.Helper()
	wantStoreErr(t, what, err, leasehold.ErrForeignRecord)
	var fe *leasehold.ForeignRecordError
	if !errors.As(err, &fe) || !strings.Contains(fe.Object, object) || fe.Reason == "" {
		t.Fatalf("%s: got %v, want a *ForeignRecordError naming %s", what, err, object)
	}
}

// A lease row whose token an adversary set to the largest bigint refuses
// the grant with ErrTokensExhausted and stays as it was: free, its token
// unchanged. The row just below the limit grants the largest token once.
func TestLeaseRowTokensExhausted(t *testing.T) {
	admin := newPool(t)
	schema := freshSchema(t)
	s := migrated(t, admin, postgres.Options{Schema: schema})
	table := fmt.Sprintf("%q.leasehold_leases", schema)
	for _, k := range []string{"full", "last"} {
		g, err := s.Acquire(ctxT(t), req(k))
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Release(ctxT(t), g); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := admin.Exec(ctxT(t), "UPDATE "+table+" SET token = CASE key WHEN 'full' THEN 9223372036854775807 ELSE 9223372036854775806 END"); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		g, err := s.Acquire(ctxT(t), req("full"))
		if err == nil {
			t.Fatalf("granted token %d over a token of 2^63-1", g.Token)
		}
		wantStoreErr(t, "acquire at 2^63-1", err, leasehold.ErrTokensExhausted)
		if !strings.Contains(err.Error(), `"full"`) {
			t.Fatalf("acquire at 2^63-1: %v does not name the key", err)
		}
	}
	var owned bool
	var tok int64
	if err := admin.QueryRow(ctxT(t), "SELECT owner IS NOT NULL, token FROM "+table+" WHERE key = 'full'").Scan(&owned, &tok); err != nil || owned || tok != 9223372036854775807 {
		t.Fatalf("row after the refusal: owned %v, token %d, %v", owned, tok, err)
	}
	g, err := s.Acquire(ctxT(t), req("last"))
	if err != nil || g.Token != 9223372036854775807 {
		t.Fatalf("acquire at 2^63-2: %+v, %v; want token 2^63-1", g, err)
	}
	if err := s.Release(ctxT(t), g); err != nil {
		t.Fatal(err)
	}
	_, err = s.Acquire(ctxT(t), req("last"))
	wantStoreErr(t, "acquire after token 2^63-1", err, leasehold.ErrTokensExhausted)
}

// The advisory mode's sequence set to its maximum by an adversary: the
// grant is refused with ErrTokensExhausted and the lock is not left held.
func TestAdvisoryTokensExhausted(t *testing.T) {
	admin := newPool(t)
	schema := freshSchema(t)
	s := migrated(t, admin, postgres.Options{Mode: postgres.Advisory, Schema: schema})
	if _, err := admin.Exec(ctxT(t), fmt.Sprintf("SELECT setval('%q.leasehold_leases_token_seq', 9223372036854775807)", schema)); err != nil {
		t.Fatal(err)
	}
	g, err := s.Acquire(ctxT(t), req("k"))
	if err == nil {
		t.Fatalf("granted token %d from a sequence at its maximum", g.Token)
	}
	wantStoreErr(t, "acquire from an exhausted sequence", err, leasehold.ErrTokensExhausted)
	if !strings.Contains(err.Error(), "leasehold_leases_token_seq") {
		t.Fatalf("%v does not name the sequence", err)
	}
	eventuallyFree(t, s, "k")
}

// Planted lease rows are refused as foreign, naming the row: a negative
// token (the old code granted token 2^64-4 from -5, or 0 from -1), an
// owner without expires_at (held forever, with no holder to name), and an
// expiry far ahead (the old code's Remaining overflowed).
func TestLeaseRowPlantedRows(t *testing.T) {
	admin := newPool(t)
	schema := freshSchema(t)
	s := migrated(t, admin, postgres.Options{Schema: schema})
	table := fmt.Sprintf("%q.leasehold_leases", schema)
	for _, c := range []struct {
		key, owner, token, expires string
		holder                     bool // Holder sees it too (it is held by its expiry)
	}{
		{"negative", "NULL", "-5", "NULL", false},
		{"minus-one", "NULL", "-1", "NULL", false},
		{"no-expiry", "'x'", "5", "NULL", false},
		{"year-5000", "'x'", "5", "'5000-01-01'", true},
		{"infinity", "'x'", "5", "'infinity'", true},
		{"held-negative", "'x'", "-5", "clock_timestamp() + interval '1 minute'", true},
	} {
		if _, err := admin.Exec(ctxT(t), fmt.Sprintf("INSERT INTO %s (key, owner, label, token, expires_at) VALUES ('%s', %s, 'l', %s, %s)",
			table, c.key, c.owner, c.token, c.expires)); err != nil {
			t.Fatal(err)
		}
		g, err := s.Acquire(ctxT(t), req(c.key))
		if err == nil {
			t.Fatalf("%s: granted token %d", c.key, g.Token)
		}
		wantForeign(t, "acquire over row "+c.key, err, c.key)
		if c.holder {
			_, err := s.Holder(ctxT(t), c.key)
			wantForeign(t, "holder of row "+c.key, err, c.key)
		}
	}
	if _, err := s.(leasehold.Lister).List(ctxT(t), "year"); !errors.Is(err, leasehold.ErrForeignRecord) {
		t.Fatalf("List over a planted row: %v, want ErrForeignRecord", err)
	}
}

// A session holding the key's advisory lock and publishing a leasehold
// application_name with an expiry thousands of years ahead (the old code's
// Remaining overflowed) or a negative token is refused as foreign.
func TestAdvisoryPlantedHolder(t *testing.T) {
	admin := newPool(t)
	s := migrated(t, admin, postgres.Options{Mode: postgres.Advisory, Schema: freshSchema(t)})
	as := s.(*postgres.AdvisoryStore)
	for i, app := range []string{"lh1 %s 5 99999999999999 planted", "lh1 %s -5 0 planted", "lh1 %s 5"} {
		key := fmt.Sprintf("k%d", i)
		id := as.LockID(key)
		c, err := admin.Acquire(ctxT(t))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Exec(ctxT(t), "SELECT set_config('application_name', $1, false), pg_advisory_lock($2)", fmt.Sprintf(app, as.LockCheck(key)), id); err != nil {
			t.Fatal(err)
		}
		_, err = s.Holder(ctxT(t), key)
		c.Conn().Close(ctxT(t))
		c.Release()
		wantForeign(t, "holder publishing "+app, err, "advisory lock")
	}
}
