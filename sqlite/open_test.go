package sqlite

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/leasehold-go/leasehold"
)

// wantOpenErr checks that err is a *leasehold.StoreError of op "open" that
// matches target (if any) and mentions each of words.
func wantOpenErr(t *testing.T, err, target error, words ...string) {
	t.Helper()
	var se *leasehold.StoreError
	if !errors.As(err, &se) || se.Op != "open" || se.Store != "sqlite" || !errors.Is(err, leasehold.ErrStore) {
		t.Fatalf("got %v (%T), want a sqlite *leasehold.StoreError with op open", err, err)
	}
	if target != nil && !errors.Is(err, target) {
		t.Fatalf("got %v, want it to match %v", err, target)
	}
	for _, w := range words {
		if !strings.Contains(err.Error(), w) {
			t.Fatalf("error %q does not mention %q", err, w)
		}
	}
	t.Logf("as expected: %v", err)
}

func TestOpenCreatesPrivateFiles(t *testing.T) {
	path := filepath.Join(t.TempDir(), "leases.db")
	s := openT(t, path, nil)
	mustAcquire(t, s, req("k", time.Second))
	for p, want := range map[string]os.FileMode{
		path: 0o600, path + "-wal": 0o600, path + "-shm": 0o600,
	} {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode() != want {
			t.Errorf("%s: mode %s, want %s", p, fi.Mode(), want)
		}
	}
	var mode, sync string
	var appID, version int
	s.db.QueryRow("PRAGMA journal_mode").Scan(&mode)
	s.db.QueryRow("PRAGMA synchronous").Scan(&sync)
	s.db.QueryRow("PRAGMA application_id").Scan(&appID)
	s.db.QueryRow("PRAGMA user_version").Scan(&version)
	if mode != "wal" || sync != "2" || appID != applicationID || version != schemaVersion {
		t.Errorf("journal_mode %q synchronous %q application_id %#x user_version %d; want wal, 2 (FULL), %#x, %d",
			mode, sync, appID, version, applicationID, schemaVersion)
	}
	if s.Path() != path {
		t.Errorf("Path() = %q, want %q", s.Path(), path)
	}
}

// TestOpenMissingFolder: a path whose folder does not exist is an error
// naming the folder, and nothing is created (a mistyped path must not
// become a new, separate store).
func TestOpenMissingFolder(t *testing.T) {
	top := t.TempDir()
	dir := filepath.Join(top, "no", "such")
	_, err := Open(ctxT(t), filepath.Join(dir, "leases.db"), nil)
	wantOpenErr(t, err, fs.ErrNotExist, dir, "does not exist")
	if _, err := os.Stat(filepath.Join(top, "no")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Open created %s (stat: %v)", filepath.Join(top, "no"), err)
	}
}

// TestOpenConcurrentOnNewFile: 8 handles open one new file at once, 10
// times; all succeed (none mistakes a half-created store for a foreign one).
func TestOpenConcurrentOnNewFile(t *testing.T) {
	for round := 0; round < 10; round++ {
		path := tempDB(t)
		errs := make(chan error, 8)
		stores := make(chan *Store, 8)
		for i := 0; i < 8; i++ {
			go func() {
				s, err := Open(ctxT(t), path, nil)
				errs <- err
				stores <- s
			}()
		}
		for i := 0; i < 8; i++ {
			if err := <-errs; err != nil {
				t.Errorf("round %d, open %d: %v", round, i, err)
			}
			if s := <-stores; s != nil {
				s.Close()
			}
		}
	}
}

func TestOpenEmptyExistingFile(t *testing.T) {
	path := tempDB(t)
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	s := openT(t, path, nil)
	mustAcquire(t, s, req("k", time.Second))
}

func TestOpenNotADatabase(t *testing.T) {
	for name, content := range map[string][]byte{
		"text":          bytes.Repeat([]byte("this is a text file, not a database\n"), 200),
		"bad_header":    append([]byte("SQLite format 3\x00"), bytes.Repeat([]byte{0xde, 0xad}, 4000)...),
		"short_garbage": []byte("x"),
	} {
		t.Run(name, func(t *testing.T) {
			path := tempDB(t)
			if err := os.WriteFile(path, content, 0o600); err != nil {
				t.Fatal(err)
			}
			_, err := Open(ctxT(t), path, nil)
			wantOpenErr(t, err, ErrNotDatabase, path)
			after, _ := os.ReadFile(path)
			if !bytes.Equal(after, content) {
				t.Fatalf("Open modified the file")
			}
		})
	}
}

func TestOpenCorruptStore(t *testing.T) {
	// A real store whose first page is damaged after the header.
	path := tempDB(t)
	s, err := Open(ctxT(t), path, nil)
	if err != nil {
		t.Fatal(err)
	}
	mustAcquire(t, s, req("k", time.Second))
	s.Close()
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt(bytes.Repeat([]byte{0xff}, 3000), 100); err != nil {
		t.Fatal(err)
	}
	f.Close()
	_, err = Open(ctxT(t), path, nil)
	wantOpenErr(t, err, ErrNotDatabase, path, "corrupt")
}

func TestOpenForeignDatabase(t *testing.T) {
	path := tempDB(t)
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT)`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	before, _ := os.ReadFile(path)
	_, err = Open(ctxT(t), path, nil)
	wantOpenErr(t, err, ErrForeignDatabase, path, "another application", "refusing")
	if after, _ := os.ReadFile(path); !bytes.Equal(before, after) {
		t.Fatal("Open modified a foreign database")
	}
	if _, err := os.Stat(path + "-wal"); err == nil {
		t.Fatal("Open switched a foreign database to WAL mode")
	}

	// A leasehold store from a newer version.
	path = tempDB(t)
	s := openT(t, path, nil)
	if _, err := s.db.Exec(`PRAGMA user_version = 7`); err != nil {
		t.Fatal(err)
	}
	_, err = Open(ctxT(t), path, nil)
	wantOpenErr(t, err, ErrForeignDatabase, "schema version 7", "upgrade")
}

func TestOpenBadPaths(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "plain")
	if err := os.WriteFile(file, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := Open(ctxT(t), filepath.Join(file, "sub", "leases.db"), nil)
	wantOpenErr(t, err, syscall.ENOTDIR, filepath.Join(file, "sub", "leases.db"))

	_, err = Open(ctxT(t), dir, nil)
	wantOpenErr(t, err, syscall.EISDIR, dir)

	_, err = Open(ctxT(t), "", nil)
	wantOpenErr(t, err, nil, "empty path")

	_, err = Open(ctxT(t), tempDB(t), &Options{BusyTimeout: -time.Second})
	wantOpenErr(t, err, nil, "negative BusyTimeout")

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err = Open(ctx, tempDB(t), nil); !errors.Is(err, context.Canceled) {
		t.Fatalf("Open on a cancelled context: %v", err)
	}
}

// TestOpenUnwritable: a directory or file the process may not write gives a
// permission error naming the path. Root ignores file modes, so as root the
// check runs in a child process of the test binary started as nobody.
func TestOpenUnwritable(t *testing.T) {
	base, err := os.MkdirTemp("", "leasehold-sqlite-perm-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(base, 0o700); os.RemoveAll(base) })
	ro := filepath.Join(base, "ro")
	if err := os.Mkdir(ro, 0o755); err != nil {
		t.Fatal(err)
	}
	// An existing store the process may read but not write.
	roFile := filepath.Join(base, "rofile.db")
	s, err := Open(ctxT(t), roFile, nil)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	os.Chmod(roFile, 0o644)
	cases := map[string]string{
		"new file in read-only dir": filepath.Join(ro, "leases.db"),
		"read-only file":            roFile,
	}
	if os.Geteuid() != 0 {
		os.Chmod(ro, 0o555)
		os.Chmod(roFile, 0o444)
		t.Cleanup(func() { os.Chmod(ro, 0o755) })
		for name, path := range cases {
			t.Run(name, func(t *testing.T) {
				_, err := Open(ctxT(t), path, nil)
				wantOpenErr(t, err, os.ErrPermission, path)
			})
		}
		return
	}
	// Root: copy the test binary where nobody can run it, and run there.
	os.Chmod(base, 0o755)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(base, "sqlite.test")
	copyFile(t, self, bin, 0o755)
	nobody := &syscall.Credential{Uid: 65534, Gid: 65534}
	for name, path := range cases {
		t.Run(name, func(t *testing.T) {
			c := startChild(t, bin, "open", map[string]string{"DB": path}, nobody)
			c.wait(t, time.Minute)
			out := c.stderr.String()
			if !strings.HasPrefix(out, "ERR store=true ") || !strings.Contains(out, path) || !strings.Contains(out, "permission denied") {
				t.Fatalf("Open as nobody of %s: %q; want a store error naming the path and the permission problem", path, out)
			}
			t.Logf("as expected: %s", strings.TrimSpace(out))
		})
	}
}

func copyFile(t *testing.T, from, to string, mode os.FileMode) {
	t.Helper()
	in, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, mode)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}
