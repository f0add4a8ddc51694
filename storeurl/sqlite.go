package storeurl

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"

	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/sqlite"
)

// sqliteRow is the embedded store, the default: always built in.
func sqliteRow() Kind {
	return Kind{
		Name: "sqlite", Title: "embedded (default)", Schemes: []string{"sqlite", "file"},
		Package: "sqlite",
		URLs:    []string{"sqlite:///path.db", "file:///path.db"},
		Usage: "sqlite:///abs/path.db   file:///abs/path.db   sqlite:relative/path.db\n" +
			"                        the embedded store: one file that processes on this host share",
		CheckURL: checkSQLite, Open: openSQLite, Migrate: migrateSQLite, Memory: MemoryProcess,
		FaultBackends: []string{"sqlite"},
		Token:         "per-key counter, same durable transaction as the grant",
		Notes:         "the default; many processes on one host; on Linux a release wakes their waiters",
	}
}

func checkSQLite(rawURL string) error {
	_, _, err := sqlite.ParseURL(rawURL)
	return err
}

func openSQLite(ctx context.Context, rawURL string, _ *url.URL) (leasehold.Store, error) {
	if err := makeDefaultFolder(rawURL); err != nil {
		return nil, err
	}
	s, err := sqlite.OpenURL(ctx, rawURL)
	if err != nil {
		return nil, err
	}
	return s, nil
}

// migrateSQLite opens and closes the embedded store, which creates or
// upgrades its schema when it is opened.
func migrateSQLite(ctx context.Context, rawURL string) error {
	s, err := openSQLite(ctx, rawURL, nil)
	if err != nil {
		return err
	}
	return s.Close()
}

// makeDefaultFolder creates the default store's folder (0700, with its
// parents) when rawURL names the default store's file (DefaultPath): the
// only folder leasehold creates. For any other file a missing folder is
// the error of sqlite.Open, which names it, so that a mistyped path never
// becomes a new, separate store.
func makeDefaultFolder(rawURL string) error {
	path, _, err := sqlite.ParseURL(rawURL)
	if err != nil {
		return nil // OpenURL reports it
	}
	def, err := DefaultPath()
	if err != nil {
		return nil // then rawURL is not the default store's
	}
	abs, err := filepath.Abs(path)
	if err != nil || abs != filepath.Clean(def) {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(def), 0o700); err != nil {
		return &leasehold.StoreError{Store: "sqlite", Op: "open", Err: fmt.Errorf("create the default store's folder: %w", err)}
	}
	return nil
}
