package fence

import (
	"context"
	"errors"
	"math"
	"slices"
	"strings"
	"testing"
)

// execLog is an Execer that records statements and answers with a fixed
// row count. It is not a Querier.
type execLog struct {
	query string
	args  []any
	rows  int64
	err   error
	calls int
}

func (e *execLog) exec() ExecFunc {
	return func(_ context.Context, q string, args ...any) (int64, error) {
		e.calls++
		e.query, e.args = q, args
		return e.rows, e.err
	}
}

func TestTableStatements(t *testing.T) {
	tests := []struct {
		name  string
		table Table
		set   map[string]any
		query string
		args  []any
	}{
		{
			"postgres check", Table{Name: "accounts"}, nil,
			`UPDATE "accounts" SET "fence" = $1 WHERE "id" = $2 AND "fence" <= $1`,
			[]any{int64(7), 11},
		},
		{
			"sqlite check", Table{Name: "accounts", Dialect: SQLite}, nil,
			`UPDATE "accounts" SET "fence" = ? WHERE "id" = ? AND "fence" <= ?`,
			[]any{int64(7), 11, int64(7)},
		},
		{
			"mysql check", Table{Name: "accounts", Dialect: MySQL}, nil,
			"UPDATE `accounts` SET `fence` = ? WHERE `id` = ? AND `fence` <= ?",
			[]any{int64(7), 11, int64(7)},
		},
		{
			"custom columns, schema", Table{Name: "billing.Accounts", ID: "account_id", Fence: "lease_token"}, nil,
			`UPDATE "billing"."Accounts" SET "lease_token" = $1 WHERE "account_id" = $2 AND "lease_token" <= $1`,
			[]any{int64(7), 11},
		},
		{
			"postgres update, reserved words, sorted", Table{Name: "order"},
			map[string]any{"user": "bob", "balance": 100},
			`UPDATE "order" SET "balance" = $1, "user" = $2, "fence" = $3 WHERE "id" = $4 AND "fence" <= $3`,
			[]any{100, "bob", int64(7), 11},
		},
		{
			"sqlite update", Table{Name: "t", Dialect: SQLite},
			map[string]any{"v": []byte("x")},
			`UPDATE "t" SET "v" = ?, "fence" = ? WHERE "id" = ? AND "fence" <= ?`,
			[]any{[]byte("x"), int64(7), 11, int64(7)},
		},
		{
			"update may set the id", Table{Name: "t"},
			map[string]any{"id": 12},
			`UPDATE "t" SET "id" = $1, "fence" = $2 WHERE "id" = $3 AND "fence" <= $2`,
			[]any{12, int64(7), 11},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			log := &execLog{rows: 1}
			if err := tt.table.Update(context.Background(), log.exec(), 11, 7, tt.set); err != nil {
				t.Fatal(err)
			}
			if log.query != tt.query {
				t.Errorf("query\n got %s\nwant %s", log.query, tt.query)
			}
			if len(log.args) != len(tt.args) {
				t.Fatalf("args %#v; want %#v", log.args, tt.args)
			}
			for i := range tt.args {
				if b, ok := tt.args[i].([]byte); ok {
					if !slices.Equal(log.args[i].([]byte), b) {
						t.Errorf("arg %d = %#v; want %#v", i, log.args[i], tt.args[i])
					}
				} else if log.args[i] != tt.args[i] {
					t.Errorf("arg %d = %#v; want %#v", i, log.args[i], tt.args[i])
				}
			}
			// Check with no columns is the same statement as Update with none.
			if tt.set == nil {
				log2 := &execLog{rows: 1}
				if err := tt.table.Check(context.Background(), log2.exec(), 11, 7); err != nil || log2.query != log.query {
					t.Errorf("Check ran %q, %v", log2.query, err)
				}
			}
		})
	}
}

func TestTableInvalid(t *testing.T) {
	bad := []struct {
		name  string
		table Table
		set   map[string]any
		token uint64
		want  error
		msg   string
	}{
		{"empty table", Table{}, nil, 1, ErrInvalidIdentifier, "empty table name"},
		{"injection in table", Table{Name: `t" SET fence = 0; --`}, nil, 1, ErrInvalidIdentifier, "table name"},
		{"quote in table", Table{Name: "t`x", Dialect: MySQL}, nil, 1, ErrInvalidIdentifier, "table name"},
		{"space", Table{Name: "my table"}, nil, 1, ErrInvalidIdentifier, "table name"},
		{"leading digit", Table{Name: "1t"}, nil, 1, ErrInvalidIdentifier, "table name"},
		{"empty part", Table{Name: "s..t"}, nil, 1, ErrInvalidIdentifier, "empty table name"},
		{"four parts", Table{Name: "a.b.c.d"}, nil, 1, ErrInvalidIdentifier, "three dotted parts"},
		{"too long", Table{Name: strings.Repeat("t", 64)}, nil, 1, ErrInvalidIdentifier, "at most 63 bytes"},
		{"non-ASCII", Table{Name: "tablé"}, nil, 1, ErrInvalidIdentifier, "table name"},
		{"bad id column", Table{Name: "t", ID: "id;drop"}, nil, 1, ErrInvalidIdentifier, "id column name"},
		{"bad fence column", Table{Name: "t", Fence: "f-f"}, nil, 1, ErrInvalidIdentifier, "fence column name"},
		{"same id and fence", Table{Name: "t", ID: "x", Fence: "x"}, nil, 1, ErrInvalidIdentifier, "both"},
		{"bad set column", Table{Name: "t"}, map[string]any{"a = 1, b": 2}, 1, ErrInvalidIdentifier, "column name"},
		{"set fence column", Table{Name: "t"}, map[string]any{"fence": 2}, 1, nil, "may not set the fence column"},
		{"token range", Table{Name: "t"}, nil, math.MaxInt64 + 1, ErrTokenRange, "9223372036854775808"},
		{"dialect", Table{Name: "t", Dialect: Dialect(9)}, nil, 1, nil, "unknown SQL dialect 9"},
	}
	for _, tt := range bad {
		t.Run(tt.name, func(t *testing.T) {
			log := &execLog{rows: 1}
			err := tt.table.Update(context.Background(), log.exec(), 1, tt.token, tt.set)
			if err == nil || (tt.want != nil && !errors.Is(err, tt.want)) || !strings.Contains(err.Error(), tt.msg) {
				t.Fatalf("err = %v; want %v containing %q", err, tt.want, tt.msg)
			}
			if log.calls != 0 {
				t.Fatalf("a statement was run: %s", log.query)
			}
		})
	}
	// The largest token that fits is accepted.
	log := &execLog{rows: 1}
	if err := (Table{Name: "t"}).Check(context.Background(), log.exec(), 1, math.MaxInt64); err != nil {
		t.Fatal(err)
	}
	// Exec validates the table too, before running anything.
	log = &execLog{rows: 1}
	if err := (Table{Name: "t;"}).Exec(context.Background(), log.exec(), 1, 1, "UPDATE x"); !errors.Is(err, ErrInvalidIdentifier) || log.calls != 0 {
		t.Fatalf("Exec with a bad table: %v, %d calls", err, log.calls)
	}
}

func TestTableResults(t *testing.T) {
	ctx := context.Background()
	tbl := Table{Name: "accounts"}

	// Zero rows from an Execer that cannot query: stale, highest unknown.
	log := &execLog{rows: 0}
	err := tbl.Check(ctx, log.exec(), 3, 7)
	var se *StaleError
	if !errors.As(err, &se) || se.Token != 7 || se.Highest != 0 || se.Resource != "accounts id=3" {
		t.Fatalf("zero rows: %#v", err)
	}

	// A driver error is wrapped, not reported as stale.
	boom := errors.New("connection reset")
	log = &execLog{err: boom}
	err = tbl.Check(ctx, log.exec(), 3, 7)
	if !errors.Is(err, boom) || errors.Is(err, ErrStale) || !strings.Contains(err.Error(), "accounts id=3") {
		t.Fatalf("driver error: %v", err)
	}

	// Exec runs the caller's statement and arguments unchanged.
	log = &execLog{rows: 1}
	q := `UPDATE accounts SET balance = $1, fence = $2 WHERE id = $3 AND fence <= $2`
	if err := tbl.Exec(ctx, log.exec(), 3, 7, q, 10, int64(7), 3); err != nil {
		t.Fatal(err)
	}
	if log.query != q || len(log.args) != 3 {
		t.Fatalf("Exec ran %q %v", log.query, log.args)
	}
}

func TestExecFuncResult(t *testing.T) {
	res, err := ExecFunc(func(context.Context, string, ...any) (int64, error) { return 3, nil }).ExecContext(context.Background(), "x")
	if err != nil {
		t.Fatal(err)
	}
	if n, err := res.RowsAffected(); n != 3 || err != nil {
		t.Fatalf("RowsAffected = %d, %v", n, err)
	}
	if _, err := res.LastInsertId(); err == nil {
		t.Fatal("LastInsertId should fail")
	}
}

func TestDialectString(t *testing.T) {
	for d, want := range map[Dialect]string{Postgres: "Postgres", SQLite: "SQLite", MySQL: "MySQL", Dialect(7): "Dialect(7)"} {
		if got := d.String(); got != want {
			t.Errorf("String() = %q; want %q", got, want)
		}
	}
	var zero Dialect
	if zero != Postgres {
		t.Error("the zero Dialect is not Postgres")
	}
}

func TestDialectExportedHelpers(t *testing.T) {
	for _, tc := range []struct {
		d                Dialect
		name, want, ph2  string
		table, wantTable string
	}{
		{Postgres, "fence", `"fence"`, "$2", "billing.accounts", `"billing"."accounts"`},
		{SQLite, "fence", `"fence"`, "?", "accounts", `"accounts"`},
		{MySQL, "fence", "`fence`", "?", "app.accounts", "`app`.`accounts`"},
	} {
		if got, err := tc.d.QuoteIdent(tc.name); got != tc.want || err != nil {
			t.Errorf("%v.QuoteIdent(%q) = %q, %v; want %q", tc.d, tc.name, got, err, tc.want)
		}
		if got, err := tc.d.QuoteTable(tc.table); got != tc.wantTable || err != nil {
			t.Errorf("%v.QuoteTable(%q) = %q, %v; want %q", tc.d, tc.table, got, err, tc.wantTable)
		}
		if got := tc.d.Placeholder(2); got != tc.ph2 {
			t.Errorf("%v.Placeholder(2) = %q; want %q", tc.d, got, tc.ph2)
		}
	}
	for _, bad := range []string{"", "a b", `x"y`, "1abc", "a.b"} {
		if _, err := Postgres.QuoteIdent(bad); !errors.Is(err, ErrInvalidIdentifier) {
			t.Errorf("QuoteIdent(%q) = %v; want ErrInvalidIdentifier", bad, err)
		}
	}
	if _, err := Dialect(9).QuoteIdent("x"); err == nil {
		t.Error("an unknown dialect quoted an identifier")
	}
	if _, err := Dialect(9).QuoteTable("x"); err == nil {
		t.Error("an unknown dialect quoted a table")
	}
}
