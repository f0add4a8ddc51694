package storeurl_test

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/storeurl"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func acquireRelease(t *testing.T, s leasehold.Store, key string) uint64 {
	t.Helper()
	ctx := context.Background()
	g, err := s.Acquire(ctx, leasehold.AcquireRequest{Key: key, Owner: leasehold.NewOwnerID(), Label: "test", TTL: time.Minute})
	if err != nil {
		t.Fatalf("acquire: %v", err)
	}
	if err := s.Release(ctx, g); err != nil {
		t.Fatalf("release: %v", err)
	}
	return g.Token
}

func TestSQLiteAndFileShareOneFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "leases.db")
	var last uint64
	for _, u := range []string{"sqlite://" + path, "file://" + path, "sqlite:" + path} {
		s, err := storeurl.Open(context.Background(), u)
		if err != nil {
			t.Fatalf("Open(%q): %v", u, err)
		}
		if got := s.Info().Name; got != "sqlite" {
			t.Errorf("Open(%q) store name %q, want sqlite", u, got)
		}
		tok := acquireRelease(t, s, "k")
		if tok <= last {
			t.Errorf("Open(%q): token %d not above the previous %d: not the same file", u, tok, last)
		}
		last = tok
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := os.Stat(path); err != nil {
		t.Errorf("store file not created: %v", err)
	}
}

// An explicit sqlite path whose folder does not exist is an error naming
// the folder, and nothing is created; only the default store's folder is
// (TestDefaultURL).
func TestSQLiteMissingFolder(t *testing.T) {
	top := t.TempDir()
	t.Setenv("XDG_STATE_HOME", top)
	dir := filepath.Join(top, "no", "such", "dir")
	for _, u := range []string{"sqlite://" + dir + "/x.db", "file://" + dir + "/x.db", "sqlite:" + dir + "/x.db"} {
		s, err := storeurl.Open(context.Background(), u)
		if err == nil {
			s.Close()
			t.Fatalf("Open(%q) succeeded", u)
		}
		if s != nil || !errors.Is(err, leasehold.ErrStore) || !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), dir) {
			t.Errorf("Open(%q): %v; want a nil store and a store error naming the folder %s", u, err, dir)
		}
		if err := storeurl.Migrate(context.Background(), u); err == nil || !strings.Contains(err.Error(), dir) {
			t.Errorf("Migrate(%q): %v; want an error naming the folder %s", u, err, dir)
		}
	}
	if _, err := os.Stat(filepath.Join(top, "no")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a folder was created: stat %s: %v", filepath.Join(top, "no"), err)
	}
}

func TestMemory(t *testing.T) {
	for _, u := range []string{"memory://", "memory:", "MEMORY://"} {
		s, err := storeurl.Open(context.Background(), u)
		if err != nil {
			t.Fatalf("Open(%q): %v", u, err)
		}
		acquireRelease(t, s, "k")
		s.Close()
	}
	if _, err := storeurl.Open(context.Background(), "memory://host/x"); !errors.Is(err, storeurl.ErrBadURL) {
		t.Errorf("memory URL with a host: err %v, want ErrBadURL", err)
	}
}

func TestDefaultURL(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("XDG_STATE_HOME", dir)
	u, err := storeurl.DefaultURL()
	if err != nil {
		t.Fatal(err)
	}
	want := filepath.Join(dir, "leasehold", "leases.db")
	if u != "sqlite://"+want {
		t.Errorf("DefaultURL with XDG_STATE_HOME: %q, want sqlite://%s", u, want)
	}
	s, err := storeurl.Open(context.Background(), u)
	if err != nil {
		t.Fatalf("Open(DefaultURL()): %v", err)
	}
	acquireRelease(t, s, "k")
	s.Close()
	if _, err := os.Stat(want); err != nil {
		t.Errorf("default store not created on first use: %v", err)
	}

	home := t.TempDir()
	t.Setenv("HOME", home)
	for _, xdg := range []string{"", "relative/dir"} {
		t.Setenv("XDG_STATE_HOME", xdg)
		p, err := storeurl.DefaultPath()
		if err != nil {
			t.Fatal(err)
		}
		if want := filepath.Join(home, ".local", "state", "leasehold", "leases.db"); p != want {
			t.Errorf("DefaultPath with XDG_STATE_HOME=%q: %q, want %q", xdg, p, want)
		}
	}
}

func TestDefaultURLEscapesPath(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "a dir with %, # and ?")
	t.Setenv("XDG_STATE_HOME", dir)
	u, err := storeurl.DefaultURL()
	if err != nil {
		t.Fatal(err)
	}
	s, err := storeurl.Open(context.Background(), u)
	if err != nil {
		t.Fatalf("Open(%q): %v", u, err)
	}
	s.Close()
	if _, err := os.Stat(filepath.Join(dir, "leasehold", "leases.db")); err != nil {
		t.Errorf("DefaultURL %q did not name the file under %q: %v", u, dir, err)
	}
}

func TestBadURLs(t *testing.T) {
	cases := []struct {
		url  string
		want error
	}{
		{"", storeurl.ErrBadURL},
		{"   ", storeurl.ErrBadURL},
		{"/var/lib/leases.db", storeurl.ErrBadURL},
		{"leases.db", storeurl.ErrBadURL},
		{"redis://[::1", storeurl.ErrBadURL},
		{"%zz://x", storeurl.ErrBadURL},
		{"mongodb://localhost", storeurl.ErrUnknownScheme},
		{"localhost:6379", storeurl.ErrUnknownScheme},
	}
	for _, c := range cases {
		s, err := storeurl.Open(context.Background(), c.url)
		if err == nil {
			s.Close()
			t.Errorf("Open(%q) succeeded", c.url)
			continue
		}
		if !errors.Is(err, c.want) {
			t.Errorf("Open(%q): %v, want %v", c.url, err, c.want)
		}
		for _, scheme := range storeurl.Schemes() {
			if !strings.Contains(err.Error(), scheme) {
				t.Errorf("Open(%q): error %q does not list scheme %q", c.url, err, scheme)
			}
		}
	}
}

func TestBadSQLiteURL(t *testing.T) {
	_, err := storeurl.Open(context.Background(), "sqlite://relative/path.db")
	if !errors.Is(err, storeurl.ErrBadURL) || !strings.Contains(err.Error(), "host") {
		t.Errorf("sqlite URL with a host: %v, want ErrBadURL about the host", err)
	}
	_, err = storeurl.Open(context.Background(), "sqlite:///tmp/x.db?nosuch=1")
	if !errors.Is(err, storeurl.ErrBadURL) || !strings.Contains(err.Error(), "nosuch") {
		t.Errorf("sqlite URL with an unknown parameter: %v, want ErrBadURL naming it", err)
	}
}

func TestErrorsHidePasswords(t *testing.T) {
	for _, u := range []string{"mongodb://user:s3cret@host/db", "nosuch://user:s3cret@[::1"} {
		_, err := storeurl.Open(context.Background(), u)
		if err == nil {
			t.Fatalf("Open(%q) succeeded", u)
		}
		if strings.Contains(err.Error(), "s3cret") {
			t.Errorf("Open(%q): error %q shows the password", u, err)
		}
	}
}
