package storeurl_test

import (
	"context"
	"errors"
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
// contacted, with what it should look like.
func TestRemoteBadURL(t *testing.T) {
	for _, u := range []string{
		"leasehold+https://", "leasehold+https://user:pw@h:1", "leasehold+https://h:1?token=x",
		"leasehold+https://h:1?token_file=a&token_file=b", "leasehold+https://h:1?token_file=a&x=1",
		"leasehold+https://h:1#frag", "leasehold+http:opaque",
	} {
		_, err := storeurl.Open(context.Background(), u)
		if !errors.Is(err, storeurl.ErrBadURL) || !strings.Contains(err.Error(), "leasehold+https://host:port[/path][?token_file=PATH]") || strings.Contains(err.Error(), "pw") {
			t.Errorf("Open(%q): %v, want ErrBadURL showing the form and no password", u, err)
		}
	}
}
