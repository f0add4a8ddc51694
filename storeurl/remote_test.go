package storeurl_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/internal/servetest"
	"github.com/leasehold-go/leasehold/sqlite"
	"github.com/leasehold-go/leasehold/storeurl"
)

// TestRemoteURL: leasehold+http://host:port opens the store a leasehold
// server serves, here a real sqlite store, with the served store's
// capabilities; a path prefix is kept.
func TestRemoteURL(t *testing.T) {
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "served.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	srv := servetest.Start(t, st)
	s, err := storeurl.Open(context.Background(), "leasehold+"+srv.URL)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	defer s.Close()
	if got := s.Info().Name; got != "remote(sqlite)" || !s.Info().PortableGrants {
		t.Errorf("Info %+v, want the served sqlite store's", s.Info())
	}
	if _, ok := s.(leasehold.Lister); !ok {
		t.Error("the remote store of a sqlite server is not a Lister")
	}
	if tok := acquireRelease(t, s, "k"); tok != 1 {
		t.Errorf("token %d, want 1", tok)
	}
	if _, err := storeurl.Open(context.Background(), "leasehold+"+srv.URL+"/prefix"); err == nil || !strings.Contains(err.Error(), "/prefix/v1/info") {
		t.Errorf("a path prefix: %v, want the prefixed info request to fail naming it", err)
	}
}

// TestRemoteBadURL: a malformed server URL is refused before anything is
// contacted, with what is wrong and what it should look like.
func TestRemoteBadURL(t *testing.T) {
	for _, tc := range []struct{ url, says string }{
		{"leasehold+https://", "no host"},
		{"leasehold+https://user:pw@h:1", "userinfo"},
		{"leasehold+https://h:1?token=x", `unknown parameter "token"`},
		{"leasehold+https://h:1?token_file=a&token_file=b", "token_file is given 2 times"},
		{"leasehold+https://h:1?token_file=a&x=1", `unknown parameter "x"`},
		{"leasehold+https://h:1#frag", "fragment"},
		{"leasehold+http:opaque", "no host"},
		{"leasehold+https://h:1?cert_file=c.pem", "cert_file and key_file go together"},
		{"leasehold+https://h:1?key_file=k.pem", "cert_file and key_file go together"},
		{"leasehold+https://h:1?ca_file=", "ca_file is empty"},
		{"leasehold+https://h:1?server=h2", `server="h2" is not HOST:PORT`},
		{"leasehold+https://h:1?server=:2", `server=":2" is not HOST:PORT`},
	} {
		_, err := storeurl.Open(context.Background(), tc.url)
		if !errors.Is(err, storeurl.ErrBadURL) || !strings.Contains(err.Error(), tc.says) || !strings.Contains(err.Error(), "leasehold+https://host:port[/path]") || strings.Contains(err.Error(), "pw") {
			t.Errorf("Open(%q): %v, want ErrBadURL saying %q, showing the form and no password", tc.url, err, tc.says)
		}
	}
}

// TestRemoteBadFiles: a token, certificate or CA file that cannot be used
// is refused at Open naming the file and its parameter, never showing what
// a token file holds.
func TestRemoteBadFiles(t *testing.T) {
	dir := t.TempDir()
	empty, junk := filepath.Join(dir, "empty"), filepath.Join(dir, "junk.pem")
	for path, text := range map[string]string{empty: "\n", junk: "not a certificate 0123456789abcdef\n"} {
		if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct{ query, says string }{
		{"token_file=" + empty, "the token file " + empty + ": its first line holds no token"},
		{"cert_file=" + junk + "&key_file=" + junk, "cert_file " + junk},
		{"cert_file=" + filepath.Join(dir, "none.pem") + "&key_file=" + junk, "none.pem"},
		{"ca_file=" + junk, "ca_file " + junk + ": no PEM certificate"},
		{"ca_file=" + filepath.Join(dir, "none.pem"), "ca_file: open " + filepath.Join(dir, "none.pem")},
	} {
		_, err := storeurl.Open(context.Background(), "leasehold+https://127.0.0.1:1?"+tc.query)
		if err == nil || !strings.Contains(err.Error(), tc.says) || strings.Contains(err.Error(), "0123456789abcdef") {
			t.Errorf("Open(?%s): %v, want an error saying %q", tc.query, err, tc.says)
		}
	}
}

// TestRemoteServersURL: server=HOST:PORT names a further server of the
// same store, tried when the first cannot be reached.
func TestRemoteServersURL(t *testing.T) {
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "served.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	first, second := servetest.Start(t, st), servetest.Start(t, st)
	first.Kill()
	s, err := storeurl.Open(context.Background(), "leasehold+"+first.URL+"?server="+strings.TrimPrefix(second.URL, "http://"))
	if err != nil {
		t.Fatalf("Open with the first server gone: %v", err)
	}
	defer s.Close()
	if tok := acquireRelease(t, s, "k"); tok != 1 {
		t.Errorf("token %d, want 1", tok)
	}
}
