package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/leasehold-go/leasehold"
)

// TestMultiProcessExclusive runs 4 child processes of 25 goroutines each
// (100 contenders) on one hot key in one file. Every winner creates a marker
// file with O_EXCL while it holds the key (a second holder would find it),
// and logs its token while holding, so the log order is the grant order and
// tokens must be strictly increasing in it. Any store error fails the child.
func TestMultiProcessExclusive(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "shared.db")
	log := filepath.Join(dir, "grants.log")
	const procs, workers, grants = 4, 25, 3
	openT(t, path, nil) // create it first, so the children race only on leases
	var children []*child
	for i := 0; i < procs; i++ {
		children = append(children, startChild(t, "", "contend", map[string]string{
			"DB": path, "KEY": "hot", "MARKER": filepath.Join(dir, "inside"), "LOG": log,
			"WORKERS": strconv.Itoa(workers), "GRANTS": strconv.Itoa(grants),
		}, nil))
	}
	for _, c := range children {
		c.wait(t, 2*time.Minute)
	}
	recs := readLog(t, log)
	if len(recs) != procs*workers*grants {
		t.Fatalf("%d grants logged, want %d", len(recs), procs*workers*grants)
	}
	var last uint64
	pids := map[string]int{}
	for i, r := range recs {
		tok, err := strconv.ParseUint(r[0], 10, 64)
		if err != nil {
			t.Fatalf("record %d: %v", i, err)
		}
		if tok <= last {
			t.Fatalf("grant %d: token %d not greater than the previous grant's %d", i, tok, last)
		}
		last = tok
		pids[r[1]]++
	}
	if len(pids) != procs {
		t.Fatalf("grants came from %d processes, want %d", len(pids), procs)
	}
	t.Logf("%d exclusive grants across %d processes, tokens 1..%d strictly increasing", len(recs), procs, last)
}

// TestCrashNoTokenReuse SIGKILLs a child in the middle of a tight loop of
// acquires and releases (so most kills land inside a write transaction or
// its fsync), three times, each time after a different number of grants.
// Every grant any child returned was logged; after each crash the tokens of
// the next child, and finally of this process, must be greater than every
// logged token for the key: none is reused. The file must pass SQLite's
// integrity check.
func TestCrashNoTokenReuse(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "crash.db")
	log := filepath.Join(dir, "grants.log")
	for _, n := range []int{37, 101, 263} {
		crashChild(t, path, log, countLines(log)+n)
	}
	recs := readLog(t, log)
	highest := map[string]uint64{}
	for i, r := range recs {
		tok, err := strconv.ParseUint(r[1], 10, 64)
		if err != nil {
			t.Fatalf("record %d %q: %v", i, r, err)
		}
		if tok <= highest[r[0]] {
			t.Fatalf("record %d: key %s token %d not greater than the earlier %d: reused after a crash", i, r[0], tok, highest[r[0]])
		}
		highest[r[0]] = tok
	}
	if len(highest) != 3 {
		t.Fatalf("grants on %d keys, want 3", len(highest))
	}
	s := openT(t, path, nil)
	for k, hi := range highest {
		var g leasehold.Grant
		for {
			var err error
			g, err = s.Acquire(ctxT(t), req(k, time.Minute))
			if err == nil {
				break
			}
			if !errors.Is(err, leasehold.ErrHeld) {
				t.Fatalf("acquire %s after the crashes: %v", k, err)
			}
			time.Sleep(5 * time.Millisecond) // the killed child's 20 ms lease
		}
		if g.Token <= hi {
			t.Fatalf("key %s: token %d after the crashes, not greater than the logged %d", k, g.Token, hi)
		}
	}
	var check string
	if err := s.db.QueryRow("PRAGMA integrity_check").Scan(&check); err != nil || check != "ok" {
		t.Fatalf("integrity_check: %q %v", check, err)
	}
	t.Logf("%d grants logged over 3 crashes; every key's token went on increasing", len(recs))
}

// TestKilledWriterLockFreed: a process SIGKILLed while it holds the write
// lock (inside BEGIN IMMEDIATE) frees it: the kernel drops its file locks,
// and its uncommitted token increment is rolled back by the next opener.
func TestKilledWriterLockFreed(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "locked.db")
	s := openT(t, path, nil)
	g := mustAcquire(t, s, req("k", time.Second))
	if err := s.Release(ctxT(t), g); err != nil {
		t.Fatal(err)
	}
	c := startChild(t, "", "hold-write-lock", map[string]string{"DB": path}, nil)
	// The child prints "locked" once it is inside the transaction.
	for !strings.Contains(c.stderr.String(), "locked\n") {
		select {
		case err := <-c.done:
			t.Fatalf("child exited: %v\n%s", err, c.stderr)
		case <-time.After(5 * time.Millisecond):
		}
	}
	// While the lock is held: reads go on (WAL), a write waits and then
	// fails cleanly, on the caller's deadline or on the busy timeout.
	if _, err := s.Holder(ctxT(t), "k"); !errors.Is(err, leasehold.ErrNotHeld) {
		t.Fatalf("holder while another process holds the write lock: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if _, err := s.Acquire(ctx, req("k", time.Second)); !errors.Is(err, context.DeadlineExceeded) || errors.Is(err, leasehold.ErrStore) {
		t.Fatalf("acquire with a deadline while the file is locked: %v, want the context's error", err)
	}
	short := openT(t, path, &Options{BusyTimeout: 100 * time.Millisecond})
	_, err := short.Acquire(ctxT(t), req("k", time.Second))
	var se *leasehold.StoreError
	if !errors.As(err, &se) || se.Op != "acquire" || !strings.Contains(err.Error(), "locked") {
		t.Fatalf("acquire with a 100ms busy timeout while the file is locked: %v, want a store error saying it is locked", err)
	}
	t.Logf("as expected: %v", err)
	c.kill()
	g2 := mustAcquire(t, s, req("k", time.Second))
	if g2.Token != g.Token+1 {
		t.Fatalf("token after the killed writer %d, want %d (its uncommitted 1000 must not count)", g2.Token, g.Token+1)
	}
}

// holdWriteLock is the child mode "hold-write-lock": begin a write
// transaction, bump key k's token to 1000 without committing, report, and
// wait to be killed.
func holdWriteLock(db *sql.DB) error {
	tx, err := db.Begin()
	if err != nil {
		return err
	}
	if _, err := tx.Exec(`UPDATE leasehold_leases SET token = 1000 WHERE key = 'k'`); err != nil {
		return err
	}
	fmt.Println("locked")
	time.Sleep(time.Hour)
	return errors.New("not killed")
}
