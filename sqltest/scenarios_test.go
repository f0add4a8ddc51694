package sqltest

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/leasehold-go/leasehold/fence"
)

// A scenario runs unchanged on every database; each creates its own
// tables.
type scenario struct {
	name string
	run  func(t *testing.T, db *sql.DB, d fence.Dialect)
}

// fenceScenarios test package fence's Table.
var fenceScenarios = []scenario{
	{"CheckSequence", checkSequence},
	{"UpdateOneStatement", updateOneStatement},
	{"ExecCallerStatement", execCallerStatement},
	{"CheckThenWriteInTx", checkThenWriteInTx},
	{"ConcurrentHolders", concurrentHolders},
	{"NullFence", nullFence},
	{"OnStaleHearsRefusals", onStaleHearsRefusals},
}

func runScenarios(t *testing.T, db *sql.DB, d fence.Dialect, list []scenario) {
	for _, s := range list {
		t.Run(s.name, func(t *testing.T) { s.run(t, db, d) })
	}
}

func mustExec(t *testing.T, db *sql.DB, d fence.Dialect, q string, args ...any) {
	t.Helper()
	if _, err := db.Exec(rebind(d, q), args...); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}

// accountsTable creates a table with rows 1 and 2 at fence 0.
func accountsTable(t *testing.T, db *sql.DB, d fence.Dialect) fence.Table {
	t.Helper()
	name := uniqueName("accounts")
	mustExec(t, db, d, `CREATE TABLE `+name+` (
		id BIGINT PRIMARY KEY,
		balance BIGINT NOT NULL DEFAULT 0,
		writes BIGINT NOT NULL DEFAULT 0,
		fence BIGINT NOT NULL DEFAULT 0)`)
	mustExec(t, db, d, `INSERT INTO `+name+` (id) VALUES (1), (2)`)
	return fence.Table{Name: name, Dialect: d}
}

func wantStale(t *testing.T, err error, token, highest uint64) {
	t.Helper()
	var se *fence.StaleError
	if !errors.As(err, &se) || !errors.Is(err, fence.ErrStale) {
		t.Fatalf("got %v; want a *StaleError", err)
	}
	if se.Token != token || se.Highest != highest {
		t.Fatalf("got %+v; want token %d, highest %d", *se, token, highest)
	}
}

func checkSequence(t *testing.T, db *sql.DB, d fence.Dialect) {
	ctx := context.Background()
	tbl := accountsTable(t, db, d)
	steps := []struct {
		id            int64
		token         uint64
		stale         bool
		highestBefore uint64
	}{
		{1, 0, false, 0}, // fence 0 admits token 0
		{1, 5, false, 0},
		{1, 5, false, 5}, // equal: the same holder again
		{1, 4, true, 5},
		{1, 9, false, 5},
		{2, 1, false, 0}, // rows are independent
		{1, 8, true, 9},
		{2, 0, true, 1},
	}
	for i, s := range steps {
		err := tbl.Check(ctx, db, s.id, s.token)
		if s.stale {
			wantStale(t, err, s.token, s.highestBefore)
		} else if err != nil {
			t.Fatalf("step %d: Check(%d, %d) = %v", i, s.id, s.token, err)
		}
	}
	for id, want := range map[int64]uint64{1: 9, 2: 1} {
		if got, err := tbl.Highest(ctx, db, id); err != nil || got != want {
			t.Fatalf("Highest(%d) = %d, %v; want %d", id, got, err, want)
		}
	}
	err := tbl.Check(ctx, db, int64(99), 1)
	if !errors.Is(err, fence.ErrNoRow) || errors.Is(err, fence.ErrStale) {
		t.Fatalf("Check of a missing row = %v; want ErrNoRow", err)
	}
	if _, err := tbl.Highest(ctx, db, int64(99)); !errors.Is(err, fence.ErrNoRow) {
		t.Fatalf("Highest of a missing row = %v", err)
	}
	// The largest token that fits a BIGINT round-trips.
	const max = uint64(1<<63 - 1)
	if err := tbl.Check(ctx, db, int64(2), max); err != nil {
		t.Fatal(err)
	}
	if got, err := tbl.Highest(ctx, db, int64(2)); err != nil || got != max {
		t.Fatalf("Highest = %d, %v", got, err)
	}
	if err := tbl.Check(ctx, db, int64(2), max+1); !errors.Is(err, fence.ErrTokenRange) {
		t.Fatalf("token above BIGINT: %v", err)
	}
}

func updateOneStatement(t *testing.T, db *sql.DB, d fence.Dialect) {
	ctx := context.Background()
	// Reserved words as names: quoting must make them work.
	name := uniqueName("order")
	q := func(ident string) string {
		t.Helper()
		s, err := d.QuoteIdent(ident)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	quoted, user, sel, group, from := q(name), q("user"), q("select"), q("group"), q("from")
	mustExec(t, db, d, `CREATE TABLE `+quoted+` (`+user+` VARCHAR(64) NOT NULL DEFAULT '', `+sel+` BIGINT NOT NULL DEFAULT 0,
		`+group+` VARCHAR(64) PRIMARY KEY, `+from+` BIGINT NOT NULL DEFAULT 0)`)
	mustExec(t, db, d, `INSERT INTO `+quoted+` (`+group+`) VALUES ('g1')`)
	tbl := fence.Table{Name: name, ID: "group", Fence: "from", Dialect: d}

	set := func(user string, n int64) map[string]any { return map[string]any{"user": user, "select": n} }
	if err := tbl.Update(ctx, db, "g1", 3, set("alice", 1)); err != nil {
		t.Fatal(err)
	}
	if err := tbl.Update(ctx, db, "g1", 4, set("bob", 2)); err != nil {
		t.Fatal(err)
	}
	wantStale(t, tbl.Update(ctx, db, "g1", 3, set("alice again", 3)), 3, 4)

	var who string
	var n, f int64
	row := db.QueryRow(rebind(d, `SELECT `+user+`, `+sel+`, `+from+` FROM `+quoted+` WHERE `+group+` = ?`), "g1")
	if err := row.Scan(&who, &n, &f); err != nil {
		t.Fatal(err)
	}
	if who != "bob" || n != 2 || f != 4 {
		t.Fatalf("row = %q, %d, fence %d; want the token-4 write", who, n, f)
	}
	if err := tbl.Update(ctx, db, "nope", 9, set("x", 0)); !errors.Is(err, fence.ErrNoRow) {
		t.Fatalf("Update of a missing row: %v", err)
	}
}

func execCallerStatement(t *testing.T, db *sql.DB, d fence.Dialect) {
	ctx := context.Background()
	tbl := accountsTable(t, db, d)
	// The caller's own statement with the fence condition, written with
	// the dialect's placeholders.
	var q string
	var args func(amount int64, token uint64, id int64) []any
	if d == fence.Postgres {
		q = `UPDATE ` + tbl.Name + ` SET balance = balance + $1, fence = $2 WHERE id = $3 AND fence <= $2`
		args = func(a int64, tok uint64, id int64) []any { return []any{a, int64(tok), id} }
	} else {
		q = `UPDATE ` + tbl.Name + ` SET balance = balance + ?, fence = ? WHERE id = ? AND fence <= ?`
		args = func(a int64, tok uint64, id int64) []any { return []any{a, int64(tok), id, int64(tok)} }
	}
	if err := tbl.Exec(ctx, db, int64(1), 2, q, args(10, 2, 1)...); err != nil {
		t.Fatal(err)
	}
	if err := tbl.Exec(ctx, db, int64(1), 3, q, args(5, 3, 1)...); err != nil {
		t.Fatal(err)
	}
	wantStale(t, tbl.Exec(ctx, db, int64(1), 2, q, args(100, 2, 1)...), 2, 3)
	var balance int64
	if err := db.QueryRow(rebind(d, `SELECT balance FROM `+tbl.Name+` WHERE id = ?`), 1).Scan(&balance); err != nil || balance != 15 {
		t.Fatalf("balance = %d, %v; want 15", balance, err)
	}
	if err := tbl.Exec(ctx, db, int64(7), 3, q, args(1, 3, 7)...); !errors.Is(err, fence.ErrNoRow) {
		t.Fatalf("missing row: %v", err)
	}

	// A statement whose other condition fails is neither stale nor missing.
	q2 := rebind(d, `UPDATE `+tbl.Name+` SET fence = ? WHERE id = ? AND fence <= ? AND balance > 1000`)
	err := tbl.Exec(ctx, db, int64(1), 4, q2, int64(4), int64(1), int64(4))
	if err == nil || errors.Is(err, fence.ErrStale) || errors.Is(err, fence.ErrNoRow) ||
		!strings.Contains(err.Error(), "does not exceed token 4") {
		t.Fatalf("other condition failing: %v", err)
	}
}

// transfer is the documented pattern: fence check, then the caller's own
// writes, in one transaction. It returns the row's write count after its
// write, which orders the committed transactions.
func transfer(ctx context.Context, db *sql.DB, tbl fence.Table, id int64, token uint64, balance int64) (int64, error) {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return 0, err
	}
	defer tx.Rollback()
	if err := tbl.Check(ctx, tx, id, token); err != nil {
		return 0, err
	}
	q := rebind(tbl.Dialect, `UPDATE `+tbl.Name+` SET balance = ?, writes = writes + 1 WHERE id = ?`)
	if _, err := tx.ExecContext(ctx, q, balance, id); err != nil {
		return 0, err
	}
	var n int64
	q = rebind(tbl.Dialect, `SELECT writes FROM `+tbl.Name+` WHERE id = ?`)
	if err := tx.QueryRowContext(ctx, q, id).Scan(&n); err != nil {
		return 0, err
	}
	return n, tx.Commit()
}

func checkThenWriteInTx(t *testing.T, db *sql.DB, d fence.Dialect) {
	ctx := context.Background()
	tbl := accountsTable(t, db, d)
	if _, err := transfer(ctx, db, tbl, 1, 10, 100); err != nil {
		t.Fatal(err)
	}
	_, err := transfer(ctx, db, tbl, 1, 9, 666)
	wantStale(t, err, 9, 10)
	var balance, writes int64
	q := rebind(d, `SELECT balance, writes FROM `+tbl.Name+` WHERE id = ?`)
	if err := db.QueryRow(q, 1).Scan(&balance, &writes); err != nil {
		t.Fatal(err)
	}
	if balance != 100 || writes != 1 {
		t.Fatalf("balance %d, writes %d: the stale transaction left a trace", balance, writes)
	}

	// A newer holder waits for an open older transaction, then passes;
	// the older commits first.
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := tbl.Check(ctx, tx, int64(1), 11); err != nil {
		t.Fatal(err)
	}
	newer := make(chan error, 1)
	go func() {
		_, err := transfer(ctx, db, tbl, 1, 12, 120)
		newer <- err
	}()
	if _, err := tx.ExecContext(ctx, rebind(d, `UPDATE `+tbl.Name+` SET balance = ? WHERE id = ?`), 110, 1); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	if err := <-newer; err != nil {
		t.Fatal(err)
	}
	if err := db.QueryRow(q, 1).Scan(&balance, &writes); err != nil || balance != 120 {
		t.Fatalf("balance %d, %v; want the newest holder's 120", balance, err)
	}
}

// concurrentHolders races workers that each write with increasing tokens
// (worker w's i-th write has token i*workers+w+1), so that every worker is
// in turn the newest holder and a stale one. The committed transactions, in
// the order the database serialized them (the row's write count), must have
// non-decreasing tokens; the highest token always wins; every refusal names
// a higher token.
func concurrentHolders(t *testing.T, db *sql.DB, d fence.Dialect) {
	ctx := context.Background()
	tbl := accountsTable(t, db, d)
	const workers, perWorker = 6, 15
	const maxToken = (perWorker-1)*workers + (workers - 1) + 1
	var mu sync.Mutex
	order := map[int64]uint64{} // write count -> token
	var stale, accepted int
	var wg sync.WaitGroup
	errs := make(chan error, workers*perWorker)
	start := make(chan struct{})
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			for i := 0; i < perWorker; i++ {
				token := uint64(i*workers + w + 1)
				n, err := transfer(ctx, db, tbl, 1, token, int64(token)*100)
				mu.Lock()
				var se *fence.StaleError
				switch {
				case err == nil:
					accepted++
					order[n] = token
				case errors.As(err, &se):
					stale++
					if se.Highest <= token {
						errs <- fmt.Errorf("token %d refused with highest %d", token, se.Highest)
					}
				default:
					errs <- fmt.Errorf("token %d: %w", token, err)
				}
				mu.Unlock()
			}
		}()
	}
	close(start)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if accepted+stale != workers*perWorker || accepted != len(order) {
		t.Fatalf("accepted %d (%d distinct positions), stale %d", accepted, len(order), stale)
	}
	positions := make([]int64, 0, len(order))
	for n := range order {
		positions = append(positions, n)
	}
	slices.Sort(positions)
	var last uint64
	for i, n := range positions {
		if n != int64(i+1) {
			t.Fatalf("write counts %v are not 1..%d", positions, len(positions))
		}
		if order[n] < last {
			t.Fatalf("write %d has token %d after token %d", n, order[n], last)
		}
		last = order[n]
	}
	if last != maxToken {
		t.Fatalf("the last committed token is %d; want the highest, %d", last, maxToken)
	}
	var balance int64
	if err := db.QueryRow(rebind(d, `SELECT balance FROM `+tbl.Name+` WHERE id = ?`), 1).Scan(&balance); err != nil || balance != maxToken*100 {
		t.Fatalf("balance %d, %v; want %d", balance, err, maxToken*100)
	}
	t.Logf("%d accepted, %d fenced out", accepted, stale)
}

func nullFence(t *testing.T, db *sql.DB, d fence.Dialect) {
	ctx := context.Background()
	name := uniqueName("nullable")
	mustExec(t, db, d, `CREATE TABLE `+name+` (id BIGINT PRIMARY KEY, fence BIGINT)`)
	mustExec(t, db, d, `INSERT INTO `+name+` (id) VALUES (1)`)
	err := fence.Table{Name: name, Dialect: d}.Check(ctx, db, int64(1), 1)
	if err == nil || !strings.Contains(err.Error(), "NULL") {
		t.Fatalf("Check on a NULL fence = %v; want an error naming NULL", err)
	}
}

// onStaleHearsRefusals: Table.OnStale hears each stale refusal, with the
// refused token, and nothing else (not the admitted writes, not a missing
// row).
func onStaleHearsRefusals(t *testing.T, db *sql.DB, d fence.Dialect) {
	ctx := context.Background()
	tbl := accountsTable(t, db, d)
	var heard []fence.StaleError
	tbl.OnStale = func(_ context.Context, err *fence.StaleError) { heard = append(heard, *err) }
	for _, tok := range []uint64{4, 9, 3, 9, 8} {
		err := tbl.Check(ctx, db, int64(1), tok)
		if stale := tok < 9 && tok != 4; stale != (err != nil) {
			t.Fatalf("token %d: %v", tok, err)
		}
	}
	if err := tbl.Check(ctx, db, int64(99), 1); !errors.Is(err, fence.ErrNoRow) {
		t.Fatalf("missing row: %v", err)
	}
	if len(heard) != 2 || heard[0].Token != 3 || heard[1].Token != 8 || heard[1].Highest != 9 {
		t.Fatalf("OnStale heard %+v; want tokens 3 and 8, highest 9", heard)
	}
}
