package sqltest

import (
	"context"
	"database/sql"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/dedupe"
	"github.com/leasehold-go/leasehold/fence"
	"github.com/leasehold-go/leasehold/memory"
)

// dedupeScenarios test package dedupe's Table.
var dedupeScenarios = []scenario{
	{"MarkSeenPrune", markSeenPrune},
	{"ExactlyOnceInTx", exactlyOnceInTx},
	{"RolledBackMarkIsUndone", rolledBackMarkIsUndone},
	{"ConsumerOverTable", consumerOverTable},
	{"BadInput", dedupeBadInput},
}

func TestDedupeSQLite(t *testing.T) {
	runScenarios(t, openSQLite(t), fence.SQLite, dedupeScenarios)
}

func TestDedupePostgres(t *testing.T) {
	runScenarios(t, openPostgres(t), fence.Postgres, dedupeScenarios)
}

// processedTable creates a fresh dedupe table.
func processedTable(t *testing.T, db *sql.DB, d fence.Dialect) dedupe.Table {
	t.Helper()
	tbl := dedupe.Table{Name: uniqueName("processed"), Dialect: d}
	for range 2 { // Migrate is idempotent
		if err := tbl.Migrate(context.Background(), db); err != nil {
			t.Fatal(err)
		}
	}
	return tbl
}

func markSeenPrune(t *testing.T, db *sql.DB, d fence.Dialect) {
	ctx := context.Background()
	tbl := processedTable(t, db, d)
	if seen, err := tbl.Seen(ctx, db, "msg-1"); seen || err != nil {
		t.Fatalf("Seen before Mark = %v, %v", seen, err)
	}
	if first, err := tbl.Mark(ctx, db, "msg-1"); !first || err != nil {
		t.Fatalf("first Mark = %v, %v", first, err)
	}
	if first, err := tbl.Mark(ctx, db, "msg-1"); first || err != nil {
		t.Fatalf("second Mark = %v, %v; want false, nil", first, err)
	}
	if seen, err := tbl.Seen(ctx, db, "msg-1"); !seen || err != nil {
		t.Fatalf("Seen after Mark = %v, %v", seen, err)
	}
	if n, err := tbl.Prune(ctx, db, time.Now().Add(-time.Hour)); n != 0 || err != nil {
		t.Fatalf("Prune of the past hour's marks = %d, %v; want 0", n, err)
	}
	if n, err := tbl.Prune(ctx, db, time.Now().Add(time.Second)); n != 1 || err != nil {
		t.Fatalf("Prune up to now = %d, %v; want 1", n, err)
	}
	if seen, _ := tbl.Seen(ctx, db, "msg-1"); seen {
		t.Fatal("a pruned id is still seen")
	}
}

// The documented pattern: mark in the transaction of the work's own write.
// Racing deliveries of one message change the balance once.
func exactlyOnceInTx(t *testing.T, db *sql.DB, d fence.Dialect) {
	ctx := context.Background()
	tbl := processedTable(t, db, d)
	accounts := uniqueName("balances")
	mustExec(t, db, d, `CREATE TABLE `+accounts+` (id BIGINT PRIMARY KEY, balance BIGINT NOT NULL)`)
	mustExec(t, db, d, `INSERT INTO `+accounts+` (id, balance) VALUES (1, 0)`)
	deposit := func(msg string) (bool, error) {
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			return false, err
		}
		defer tx.Rollback()
		first, err := tbl.Mark(ctx, tx, msg)
		if err != nil || !first {
			return false, err
		}
		if _, err := tx.ExecContext(ctx, rebind(d, `UPDATE `+accounts+` SET balance = balance + 10 WHERE id = ?`), 1); err != nil {
			return false, err
		}
		return true, tx.Commit()
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	applied := 0
	for range 8 {
		wg.Go(func() {
			ok, err := deposit("deposit-1")
			if err != nil {
				t.Error(err)
			}
			mu.Lock()
			defer mu.Unlock()
			if ok {
				applied++
			}
		})
	}
	wg.Wait()
	var balance int64
	if err := db.QueryRow(rebind(d, `SELECT balance FROM `+accounts+` WHERE id = ?`), 1).Scan(&balance); err != nil {
		t.Fatal(err)
	}
	if applied != 1 || balance != 10 {
		t.Fatalf("8 racing deliveries applied %d times, balance %d; want once, 10", applied, balance)
	}
}

// A worker that fails after marking, before commit, leaves the message
// undone: its redelivery runs.
func rolledBackMarkIsUndone(t *testing.T, db *sql.DB, d fence.Dialect) {
	ctx := context.Background()
	tbl := processedTable(t, db, d)
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if first, err := tbl.Mark(ctx, tx, "m"); !first || err != nil {
		t.Fatalf("Mark in tx = %v, %v", first, err)
	}
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
	if seen, err := tbl.Seen(ctx, db, "m"); seen || err != nil {
		t.Fatalf("Seen after a rolled-back mark = %v, %v; want false", seen, err)
	}
	if first, err := tbl.Mark(ctx, db, "m"); !first || err != nil {
		t.Fatalf("redelivery's Mark = %v, %v; want first", first, err)
	}
}

// The Consumer over a SQL record: the work runs once across two
// redeliveries and two consumers.
func consumerOverTable(t *testing.T, db *sql.DB, d fence.Dialect) {
	ctx := context.Background()
	tbl := processedTable(t, db, d)
	rec := tbl.Record(db)
	store := memory.New(nil)
	runs := 0
	// The recommended work: mark in the transaction of the effect.
	work := func(ctx context.Context, _ *leasehold.Lease) error {
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		defer tx.Rollback()
		if first, err := tbl.Mark(ctx, tx, "job-9"); err != nil {
			return err
		} else if !first {
			return dedupe.ErrDuplicate
		}
		runs++
		return tx.Commit()
	}
	var results []dedupe.Result
	for range 2 {
		client, err := leasehold.New(store, nil)
		if err != nil {
			t.Fatal(err)
		}
		c := &dedupe.Consumer{Client: client, Record: rec, Lease: leasehold.AcquireOptions{TTL: time.Minute}}
		for range 2 {
			res, err := c.Handle(ctx, "job-9", work)
			if err != nil {
				t.Fatal(err)
			}
			results = append(results, res)
		}
		client.Close()
	}
	want := []dedupe.Result{dedupe.Processed, dedupe.Duplicate, dedupe.Duplicate, dedupe.Duplicate}
	if runs != 1 || !slices.Equal(results, want) {
		t.Fatalf("work ran %d times, results %v; want 1 run, %v", runs, results, want)
	}
}

func dedupeBadInput(t *testing.T, db *sql.DB, d fence.Dialect) {
	ctx := context.Background()
	tbl := processedTable(t, db, d)
	if _, err := tbl.Mark(ctx, db, strings.Repeat("x", dedupe.MaxIDLen+1)); !errors.Is(err, dedupe.ErrInvalidID) {
		t.Fatalf("Mark of an over-long id = %v, want ErrInvalidID", err)
	}
	var n int
	if err := db.QueryRow(`SELECT COUNT(*) FROM ` + tbl.Name).Scan(&n); err != nil || n != 0 {
		t.Fatalf("rows after refused marks: %d, %v", n, err)
	}
	missing := dedupe.Table{Name: uniqueName("missing"), Dialect: d}
	_, err := missing.Mark(ctx, db, "a")
	if err == nil || !strings.Contains(err.Error(), missing.Name) {
		t.Fatalf("Mark on a missing table = %v, want an error naming %s", err, missing.Name)
	}
	if _, err := missing.Seen(ctx, db, "a"); err == nil || !strings.Contains(err.Error(), missing.Name) {
		t.Fatalf("Seen on a missing table = %v, want an error naming %s", err, missing.Name)
	}
}
