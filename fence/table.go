package fence

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
)

// Table describes a SQL table whose rows are fenced: each row holds, in its
// fence column, the highest token that has written to it. Declare the column
// BIGINT NOT NULL DEFAULT 0 (a NULL fence compares as unknown and refuses
// every token), and create each row before fencing it.
//
// Its methods all come down to one conditional UPDATE, which checks the
// token and records it in the same atomic step:
//
//	UPDATE t SET fence = $tok WHERE id = $id AND fence <= $tok
//
// Zero rows affected means fenced out: a newer holder has written.
//
// There are two ways to fence a write:
//
//   - Check, then write, in one transaction. Pass the *sql.Tx to
//     [Table.Check], then make the write on the same transaction and commit.
//     The UPDATE locks the row (the whole database in SQLite) until the
//     commit, so a newer holder's check waits for it and then passes, and an
//     older holder's check after it fails. Under PostgreSQL's REPEATABLE READ
//     or SERIALIZABLE the waiting transaction fails with a serialization
//     error instead: retry it.
//   - One statement: [Table.Update] sets the caller's columns and the fence
//     in the conditional UPDATE itself. [Table.Exec] runs a statement the
//     caller wrote, which must include the condition.
//
// The table and column names are validated (a letter or underscore, then
// letters, digits or underscores; the table may be schema-qualified) and
// quoted, so they cannot inject SQL, and they are case-sensitive: give
// PostgreSQL names in lower case unless they were created quoted. Ids and
// tokens are always passed as placeholders. Tokens above math.MaxInt64 do
// not fit a BIGINT and are refused with [ErrTokenRange].
//
// The zero value of each field is its default; only Name is required.
type Table struct {
	Name    string  // table name, optionally schema-qualified ("billing.accounts")
	ID      string  // key column; "" means "id"
	Fence   string  // column holding the highest token; "" means "fence"
	Dialect Dialect // placeholder and quoting style; the zero value is Postgres ($1)

	// OnStale, if set, is told of every write refused with a *StaleError
	// (for metrics: leasehold.FenceRejections).
	OnStale StaleFunc
}

// Check records token as the row's fence if it is greater than or equal to
// the row's current fence, in one statement. It returns a *[StaleError] if
// the row's fence is higher, and an error matching [ErrNoRow] if there is no
// such row (when exec is also a [Querier]). Pass a *sql.Tx to make the
// caller's own write in the same transaction.
func (t Table) Check(ctx context.Context, exec Execer, id any, token uint64) error {
	return t.Update(ctx, exec, id, token, nil)
}

// Update sets the given columns and records token as the row's fence, in
// one conditional UPDATE that changes nothing unless token is greater than
// or equal to the row's current fence:
//
//	UPDATE t SET col1 = $1, col2 = $2, fence = $3 WHERE id = $4 AND fence <= $3
//
// Columns are set in name order; their names are validated and quoted, and
// may not include the fence column. Errors are as for [Table.Check].
func (t Table) Update(ctx context.Context, exec Execer, id any, token uint64, set map[string]any) error {
	q, err := t.quoted()
	if err != nil {
		return err
	}
	tok, err := sqlToken(token)
	if err != nil {
		return err
	}
	names := make([]string, 0, len(set))
	for name := range set {
		names = append(names, name)
	}
	slices.Sort(names)

	var b strings.Builder
	args := make([]any, 0, len(set)+4)
	arg := func(v any) string {
		args = append(args, v)
		return t.Dialect.placeholder(len(args))
	}
	b.WriteString("UPDATE " + q.table + " SET ")
	for _, name := range names {
		col, err := t.Dialect.quote("column", name)
		if err != nil {
			return err
		}
		if col == q.fence {
			return fmt.Errorf("fence: Update may not set the fence column %s itself", col)
		}
		b.WriteString(col + " = " + arg(set[name]) + ", ")
	}
	tokPlaceholder := arg(tok)
	b.WriteString(q.fence + " = " + tokPlaceholder)
	b.WriteString(" WHERE " + q.id + " = " + arg(id) + " AND " + q.fence + " <= ")
	if t.Dialect == Postgres {
		b.WriteString(tokPlaceholder) // $n can be used twice
	} else {
		b.WriteString(arg(tok))
	}
	res, err := exec.ExecContext(ctx, b.String(), args...)
	return t.result(ctx, exec, id, token, res, err)
}

// Exec runs a statement written by the caller that must include the fence
// condition itself, and reports zero rows affected as for [Table.Check]. id
// and token are used only to explain zero rows; they are not added to args.
// For example, with the Postgres dialect:
//
//	err := accounts.Exec(ctx, tx, id, token,
//		`UPDATE accounts SET balance = balance + $1, fence = $2 WHERE id = $3 AND fence <= $2`,
//		amount, int64(token), id)
//
// If the statement changed no row although the row exists and its fence does
// not exceed token, another condition in the statement did not match: Exec
// then returns an error that matches neither [ErrStale] nor [ErrNoRow].
func (t Table) Exec(ctx context.Context, exec Execer, id any, token uint64, query string, args ...any) error {
	if _, err := t.quoted(); err != nil {
		return err
	}
	res, err := exec.ExecContext(ctx, query, args...)
	return t.result(ctx, exec, id, token, res, err)
}

// Highest returns the fence of the row with the given id: the highest token
// it has accepted. It returns an error matching [ErrNoRow] if there is no
// such row.
func (t Table) Highest(ctx context.Context, q Querier, id any) (uint64, error) {
	n, err := t.quoted()
	if err != nil {
		return 0, err
	}
	query := "SELECT " + n.fence + " FROM " + n.table + " WHERE " + n.id + " = " + t.Dialect.placeholder(1)
	var fence sql.NullInt64
	switch err := q.QueryRowContext(ctx, query, id).Scan(&fence); {
	case errors.Is(err, sql.ErrNoRows):
		return 0, fmt.Errorf("%w: %s", ErrNoRow, t.describe(id))
	case err != nil:
		return 0, fmt.Errorf("fence: reading the fence of %s: %w", t.describe(id), err)
	case !fence.Valid:
		return 0, fmt.Errorf("fence: the fence of %s is NULL: declare the column BIGINT NOT NULL DEFAULT 0", t.describe(id))
	case fence.Int64 < 0:
		return 0, fmt.Errorf("fence: the fence of %s is negative (%d)", t.describe(id), fence.Int64)
	}
	return uint64(fence.Int64), nil
}

// result turns the outcome of a fenced statement into this package's errors.
func (t Table) result(ctx context.Context, exec Execer, id any, token uint64, res sql.Result, err error) error {
	err = t.outcome(ctx, exec, id, token, res, err)
	t.OnStale.report(ctx, err)
	return err
}

// outcome is result before OnStale hears of it.
func (t Table) outcome(ctx context.Context, exec Execer, id any, token uint64, res sql.Result, err error) error {
	if err != nil {
		return fmt.Errorf("fence: fencing %s: %w", t.describe(id), err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("fence: fencing %s: rows affected: %w", t.describe(id), err)
	}
	if n > 0 {
		return nil
	}
	q, ok := exec.(Querier)
	if !ok {
		return &StaleError{Resource: t.describe(id), Token: token}
	}
	highest, err := t.Highest(ctx, q, id)
	if errors.Is(err, ErrNoRow) {
		return err
	}
	if err != nil {
		return fmt.Errorf("fence: the statement changed no row of %s (stale token or missing row): %w", t.describe(id), err)
	}
	if highest > token {
		return &StaleError{Resource: t.describe(id), Token: token, Highest: highest}
	}
	hint := ""
	if t.Dialect == MySQL && highest == token {
		hint = " (MySQL counts only changed rows: set clientFoundRows=true in the DSN)"
	}
	return fmt.Errorf("fence: the statement changed no row of %s although its fence %d does not exceed token %d%s",
		t.describe(id), highest, token, hint)
}

// quotedNames are a Table's validated, quoted identifiers.
type quotedNames struct{ table, id, fence string }

func (t Table) quoted() (quotedNames, error) {
	if err := t.Dialect.valid(); err != nil {
		return quotedNames{}, err
	}
	table, err := t.Dialect.quoteTable(t.Name)
	if err != nil {
		return quotedNames{}, err
	}
	id, err := t.Dialect.quote("id column", cmp.Or(t.ID, "id"))
	if err != nil {
		return quotedNames{}, err
	}
	fence, err := t.Dialect.quote("fence column", cmp.Or(t.Fence, "fence"))
	if err != nil {
		return quotedNames{}, err
	}
	if id == fence {
		return quotedNames{}, fmt.Errorf("%w: the id and fence columns are both %s", ErrInvalidIdentifier, id)
	}
	return quotedNames{table: table, id: id, fence: fence}, nil
}

// describe names a row in errors.
func (t Table) describe(id any) string {
	return fmt.Sprintf("%s %s=%v", t.Name, cmp.Or(t.ID, "id"), id)
}

// sqlToken converts a token to a BIGINT argument.
func sqlToken(token uint64) (int64, error) {
	if token > math.MaxInt64 {
		return 0, fmt.Errorf("%w: %d", ErrTokenRange, token)
	}
	return int64(token), nil
}
