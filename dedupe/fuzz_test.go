package dedupe

import (
	"context"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/fence"
)

// FuzzRecordID: an item id is accepted exactly when it is 1 to MaxIDLen
// bytes of UTF-8 without control characters; an accepted id makes a valid
// lease key under the Consumer's default prefix and marks once in a
// Memory record; a refused one matches ErrInvalidID, in ValidateID and in
// every Record method, before any database is touched.
func FuzzRecordID(f *testing.F) {
	for _, s := range []string{"order-1", "", "a\x00b", "\x7f", "\u0085", "\xff", strings.Repeat("x", MaxIDLen), strings.Repeat("x", MaxIDLen+1), "日本語", "a/b c"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, id string) {
		ctx := context.Background()
		err := ValidateID(id)
		clean := id != "" && len(id) <= MaxIDLen && utf8.ValidString(id) && !strings.ContainsFunc(id, func(r rune) bool {
			return r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0)
		})
		if (err == nil) != clean {
			t.Fatalf("ValidateID(%q) = %v, but the id is clean: %v", id, err, clean)
		}
		var m Memory
		tbl := Table{Name: "processed"}
		if err != nil {
			if !errors.Is(err, ErrInvalidID) {
				t.Fatalf("ValidateID(%q) = %v, not ErrInvalidID", id, err)
			}
			if _, merr := m.Mark(ctx, id); !errors.Is(merr, ErrInvalidID) {
				t.Fatalf("Memory.Mark(%q) = %v, want ErrInvalidID", id, merr)
			}
			// A nil database: a refusal must come before any statement.
			if _, terr := tbl.Mark(ctx, nil, id); !errors.Is(terr, ErrInvalidID) {
				t.Fatalf("Table.Mark(%q) = %v, want ErrInvalidID", id, terr)
			}
			if _, terr := tbl.Seen(ctx, nil, id); !errors.Is(terr, ErrInvalidID) {
				t.Fatalf("Table.Seen(%q) = %v, want ErrInvalidID", id, terr)
			}
			return
		}
		if kerr := leasehold.ValidateKey("dedupe/" + id); kerr != nil {
			t.Fatalf("id %q is valid but its lease key is not: %v", id, kerr)
		}
		for i, want := range []bool{true, false} {
			if first, err := m.Mark(ctx, id); err != nil || first != want {
				t.Fatalf("Memory.Mark(%q) #%d = %v, %v; want %v", id, i+1, first, err, want)
			}
		}
		if seen, err := m.Seen(ctx, id); err != nil || !seen {
			t.Fatalf("Memory.Seen(%q) after Mark = %v, %v", id, seen, err)
		}
	})
}

// FuzzTableNames: a Table's statements are made only from plain quoted
// identifiers; names that are not, or an id column that is the done_at
// column, are refused with ErrInvalidIdentifier (an unknown dialect with
// its own error), never spliced into SQL.
func FuzzTableNames(f *testing.F) {
	f.Add("processed", "", "", 0)
	f.Add("app.processed", "msg", "at", 2)
	f.Add(`x"; DROP TABLE y; --`, "id", "done_at", 1)
	f.Add("t", "a", "a", 0)
	f.Add("t", "id", "`x`", 2)
	f.Add("t", "", "", 9)
	f.Fuzz(func(t *testing.T, name, id, doneAt string, dialect int) {
		tbl := Table{Name: name, ID: id, DoneAt: doneAt, Dialect: fence.Dialect(dialect)}
		create, cerr := tbl.CreateSQL()
		mark, merr := tbl.markSQL()
		if (cerr == nil) != (merr == nil) {
			t.Fatalf("%+v: CreateSQL and markSQL disagree: %v, %v", tbl, cerr, merr)
		}
		if cerr != nil {
			if dialect >= 0 && dialect <= 2 && !errors.Is(cerr, fence.ErrInvalidIdentifier) {
				t.Fatalf("%+v: CreateSQL = %v, not ErrInvalidIdentifier", tbl, cerr)
			}
			return
		}
		for _, s := range []string{name, id, doneAt} {
			if strings.ContainsAny(s, "\"`;' \t\n()") {
				t.Fatalf("%+v: a name with quoting or punctuation was accepted: %q, %q", tbl, create, mark)
			}
		}
	})
}
