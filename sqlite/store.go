package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"net/url"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/leasehold-go/leasehold"
	msqlite "modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// name is the store's kind, reported by Info and in every StoreError.
const name = "sqlite"

// DefaultBusyTimeout is how long an operation waits, by default, for a write
// lock that another connection or process holds.
const DefaultBusyTimeout = 30 * time.Second

// MinTTL is the shortest TTL the store accepts. A grant costs an fsync of the
// write-ahead log, which takes from a fraction of a millisecond (SSD) to
// several milliseconds (busy or rotating disk); a TTL shorter than that would
// often have ended before the caller learned it holds the lease. 10 ms keeps
// every TTL comfortably above one commit, while still letting tests use short
// leases.
const MinTTL = 10 * time.Millisecond

// Sentinel errors reported by Open and OpenURL, wrapped in a
// *leasehold.StoreError (so errors.Is(err, leasehold.ErrStore) holds too).
var (
	// ErrNotDatabase: the file exists but is not a SQLite database, or is
	// corrupt.
	ErrNotDatabase = errors.New("sqlite: file is not a SQLite database or is corrupt")
	// ErrForeignDatabase: the file is a SQLite database that leasehold did
	// not create (other tables, another application id, or a newer schema).
	// Open never modifies such a file.
	ErrForeignDatabase = errors.New("sqlite: database was not created by this version of leasehold")
)

// Options configure Open. The zero value (or nil) gives the documented
// defaults.
type Options struct {
	// BusyTimeout bounds how long one operation waits for the database's
	// write lock while other connections (in this or other processes) hold
	// it, before failing with a *leasehold.StoreError. Zero means
	// DefaultBusyTimeout. The caller's context can end the wait sooner.
	BusyTimeout time.Duration

	// Now is the store's wall clock; nil means time.Now. Every process that
	// shares the file must use the same clock: tests inject one to step it.
	Now func() time.Time
}

// Store is a leasehold.Store over one SQLite file. It also implements
// leasehold.Lister, leasehold.BatchRenewer and leasehold.Notifier. It is safe for concurrent use;
// open it with Open or OpenURL.
type Store struct {
	path        string
	db          *sql.DB
	now         func() time.Time
	busyTimeout time.Duration

	// writer admits one writing transaction of this Store at a time: they
	// would queue on SQLite's file lock anyway, and queueing here instead
	// is fair and sleeps no longer than needed, while reads keep the other
	// pooled connections.
	writer chan struct{}

	stmts  stmts
	wake   *waker
	closed atomic.Bool
}

var (
	_ leasehold.Store        = (*Store)(nil)
	_ leasehold.Lister       = (*Store)(nil)
	_ leasehold.BatchRenewer = (*Store)(nil)
	_ leasehold.Notifier     = (*Store)(nil)
)

// maxConns caps the connections of one Store: one writer at a time, plus a
// few for concurrent Holder and List calls, which WAL mode lets run beside
// the writer.
const maxConns = 4

// Open opens the store in the SQLite file at path, creating the file (mode
// 0600) if needed, and the schema if the file is new. The file's folder
// must exist: Open creates no folders, so that a mistyped path is an error
// rather than a new, separate store (storeurl creates the default store's
// folder). It puts the database in WAL mode and uses
// synchronous=FULL, so every committed grant survives a machine crash.
//
// Open fails with a *leasehold.StoreError (op "open") when the folder does
// not exist (matching fs.ErrNotExist, naming the folder), when the file
// cannot be created or written, when the file is not a SQLite database
// (ErrNotDatabase), and when it is a database that leasehold did not create
// (ErrForeignDatabase); it never modifies a file it does not recognise.
func Open(ctx context.Context, path string, opts *Options) (*Store, error) {
	if opts == nil {
		opts = &Options{}
	}
	if path == "" {
		return nil, openErr(errors.New("empty path"))
	}
	if opts.BusyTimeout < 0 {
		return nil, openErr(fmt.Errorf("negative BusyTimeout %s", opts.BusyTimeout))
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, openErr(fmt.Errorf("path %q: %w", path, err))
	}
	if err := createFile(abs); err != nil {
		return nil, openErr(err)
	}
	s := &Store{
		path:        abs,
		now:         time.Now,
		busyTimeout: DefaultBusyTimeout,
		writer:      make(chan struct{}, 1),
		wake:        newWaker(abs),
	}
	if opts.Now != nil {
		s.now = opts.Now
	}
	if opts.BusyTimeout > 0 {
		s.busyTimeout = opts.BusyTimeout
	}
	busyMS := s.busyTimeout.Milliseconds()
	if busyMS < 1 {
		busyMS = 1
	}
	// SQLite URI: file:<percent-encoded absolute path>?<parameters>.
	// busy_timeout is applied first by the driver; synchronous is per
	// connection; _txlock makes every BeginTx a BEGIN IMMEDIATE.
	dsn := (&url.URL{Scheme: "file", Path: abs}).String() + "?" + url.Values{
		"_pragma": {fmt.Sprintf("busy_timeout(%d)", busyMS), "synchronous(FULL)"},
		"_txlock": {"immediate"},
	}.Encode()
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, openErr(fmt.Errorf("%s: %w", abs, err))
	}
	db.SetMaxOpenConns(maxConns)
	db.SetMaxIdleConns(maxConns)
	s.db = db
	if err := s.setup(ctx); err != nil {
		db.Close()
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, openErr(err)
	}
	if err := s.stmts.prepare(ctx, db); err != nil {
		s.stmts.close()
		db.Close()
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, openErr(fmt.Errorf("%s: prepare: %w", abs, err))
	}
	return s, nil
}

// createFile makes the file at path (0600) if missing, in a folder that
// must exist, checks that the process can write it, and that it is empty
// or starts with SQLite's header. This reports a permission
// problem with the path and the system's words rather than as SQLite's
// "unable to open database file", and keeps SQLite from ever writing to a
// short file that is not a database (it would take it for an empty one).
func createFile(path string) error {
	dir := filepath.Dir(path)
	if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%s: the folder %s does not exist (create it first: Open creates no folders): %w", path, dir, fs.ErrNotExist)
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("open database file for writing: %w", err)
	}
	defer f.Close()
	head := make([]byte, len(sqliteHeader))
	n, err := io.ReadFull(f, head)
	switch {
	case n == 0 && err == io.EOF:
		return nil // empty: SQLite makes it a database
	case err != nil && err != io.ErrUnexpectedEOF:
		return fmt.Errorf("read %s: %w", path, err)
	case string(head[:n]) != sqliteHeader:
		return fmt.Errorf("%w: %s does not start with the SQLite header", ErrNotDatabase, path)
	}
	return nil
}

// sqliteHeader starts every non-empty SQLite database file.
const sqliteHeader = "SQLite format 3\x00"

func openErr(err error) error {
	return &leasehold.StoreError{Store: name, Op: "open", Err: err}
}

// Path returns the absolute path of the store's database file.
func (s *Store) Path() string { return s.path }

// Info reports the store's name and TTL bounds. Tokens are safe: they are
// strictly increasing per key across release, expiry, reopening, process
// crashes and machine crashes, as long as the file is not deleted.
func (s *Store) Info() leasehold.Info {
	return leasehold.Info{Name: name, MinTTL: MinTTL, MaxTTL: leasehold.MaxTTL, SafeTokens: true, PortableGrants: true}
}

// Close stops the store's wake-up watch and closes its connections. It does
// not release leases; their TTLs end them. Later calls fail with a
// StoreError wrapping leasehold.ErrClosed.
func (s *Store) Close() error {
	if s.closed.Swap(true) {
		return nil
	}
	s.wake.close()
	s.stmts.close()
	if err := s.db.Close(); err != nil {
		return &leasehold.StoreError{Store: name, Op: "close", Err: err}
	}
	return nil
}

// fail turns err from op into the error the caller sees: the context's
// error as is, ErrClosed after Close, otherwise a *leasehold.StoreError.
func (s *Store) fail(ctx context.Context, op string, err error) error {
	if cerr := ctx.Err(); cerr != nil {
		return cerr
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	if s.closed.Load() {
		err = leasehold.ErrClosed
	}
	return &leasehold.StoreError{Store: name, Op: op, Err: err}
}

func (s *Store) checkOpen(ctx context.Context, op string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if s.closed.Load() {
		return &leasehold.StoreError{Store: name, Op: op, Err: leasehold.ErrClosed}
	}
	return nil
}

// sqliteCode returns the primary SQLite result code of err, or 0.
func sqliteCode(err error) int {
	var e *msqlite.Error
	if errors.As(err, &e) {
		return e.Code() & 0xff
	}
	return 0
}

// isBusy reports whether err means another connection holds a lock that
// the operation needed.
func isBusy(err error) bool {
	switch sqliteCode(err) {
	case sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED:
		return true
	}
	return false
}

// retry runs f until it succeeds, fails with something other than a busy
// lock, ctx is done, or the store's busy timeout has passed. Inside f,
// SQLite's busy handler already waits (honouring ctx) for most locks; this
// loop covers the busy results that SQLite returns without waiting.
func (s *Store) retry(ctx context.Context, f func() error) error {
	deadline := time.Now().Add(s.busyTimeout)
	backoff := time.Millisecond
	for {
		err := f()
		if err == nil || !isBusy(err) {
			return err
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if !time.Now().Before(deadline) {
			return fmt.Errorf("database file locked by another writer (this or another process) for more than %s: %w", s.busyTimeout, err)
		}
		t := time.NewTimer(rand.N(backoff) + time.Millisecond/2)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
		backoff = min(2*backoff, 50*time.Millisecond)
	}
}

// write runs f in one write transaction (BEGIN IMMEDIATE), passing the
// store's clock read once the write lock is held, and commits it. If f
// returns an error the transaction is rolled back and the error returned.
func (s *Store) write(ctx context.Context, f func(tx *sql.Tx, now time.Time) error) error {
	select {
	case s.writer <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	defer func() { <-s.writer }()
	return s.retry(ctx, func() error {
		tx, err := s.db.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		if err := f(tx, s.now()); err != nil {
			tx.Rollback()
			return err
		}
		return tx.Commit()
	})
}
