package sqlite

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/leasehold-go/leasehold"
)

func TestParseURL(t *testing.T) {
	for _, tc := range []struct {
		url, path string
		busy      time.Duration
	}{
		{"sqlite:///var/lib/leases.db", "/var/lib/leases.db", 0},
		{"sqlite://localhost/var/lib/leases.db", "/var/lib/leases.db", 0},
		{"sqlite:/var/lib/leases.db", "/var/lib/leases.db", 0},
		{"sqlite:rel/leases.db", "rel/leases.db", 0},
		{"sqlite:leases.db?busy_timeout=5s", "leases.db", 5 * time.Second},
		{"sqlite:///tmp/with%20space%3F.db", "/tmp/with space?.db", 0},
		{"file:///var/lib/leases.db", "/var/lib/leases.db", 0},
		{"file:/var/lib/leases.db", "/var/lib/leases.db", 0},
		{"file://localhost/var/lib/leases.db", "/var/lib/leases.db", 0},
		{"file:rel/leases.db", "rel/leases.db", 0},
	} {
		path, opts, err := ParseURL(tc.url)
		if err != nil || path != tc.path || opts.BusyTimeout != tc.busy {
			t.Errorf("ParseURL(%q) = %q, %+v, %v; want %q, busy %s", tc.url, path, opts, err, tc.path, tc.busy)
		}
	}
	for _, bad := range []string{
		"sqlite://relative/leases.db", // "relative" would be a host
		"sqlite://host.example/leases.db",
		"redis://localhost/0",
		"sqlite:",
		"sqlite:///",
		"sqlite:///var/lib/",
		"sqlite:///a.db?cache=shared",
		"sqlite:///a.db?busy_timeout=soon",
		"sqlite:///a.db#frag",
		"sqlite://user@/a.db",
		"sqlite:///a%zz.db",
	} {
		if _, _, err := ParseURL(bad); err == nil {
			t.Errorf("ParseURL(%q) accepted", bad)
		} else {
			t.Logf("ParseURL(%q): %v", bad, err)
		}
	}
}

func TestOpenURL(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "url.db")
	s, err := OpenURL(ctxT(t), "sqlite://"+path+"?busy_timeout=2s")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s.busyTimeout != 2*time.Second || s.Path() != path {
		t.Fatalf("busy %s path %s", s.busyTimeout, s.Path())
	}
	g := mustAcquire(t, s, req("k", time.Minute))
	s2, err := OpenURL(ctxT(t), "file://"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	if _, err := s2.Acquire(ctxT(t), req("k", time.Minute)); !errors.Is(err, leasehold.ErrHeld) {
		t.Fatalf("file URL opened another file? acquire: %v (holder token %d)", err, g.Token)
	}
	// Relative form, from the working directory.
	t.Chdir(dir)
	s3, err := OpenURL(ctxT(t), "sqlite:url.db")
	if err != nil {
		t.Fatal(err)
	}
	defer s3.Close()
	if s3.Path() != path {
		t.Fatalf("relative URL opened %s", s3.Path())
	}
	if _, err := OpenURL(ctxT(t), "sqlite://relative/x.db"); !errors.Is(err, leasehold.ErrStore) {
		t.Fatalf("OpenURL of a host form: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "x.db")); err == nil {
		t.Fatal("refused URL created a file")
	}
}

// A refused URL's error never shows its password (it quoted the URL as
// given).
func TestParseURLHidesPassword(t *testing.T) {
	for _, u := range []string{"sqlite://u:s3cretpw@/x.db", "file://u:s3cretpw@localhost/x.db", "sqlite://u:s3cretpw@[::1", "sqlite://u:s3cretpw@host/x.db"} {
		_, _, err := ParseURL(u)
		if err == nil || strings.Contains(err.Error(), "s3cretpw") {
			t.Errorf("ParseURL(%q) = %v; want an error without the password", u, err)
		}
	}
}
