package storeurl

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"

	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/memory"
	"github.com/leasehold-go/leasehold/sqlite"
)

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

// checkMemory accepts memory: and memory:// with nothing else.
func checkMemory(rawURL string) error {
	u, err := url.Parse(rawURL)
	if err != nil {
		return err
	}
	if u.Opaque != "" || u.Host != "" || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return fmt.Errorf("%q: a memory store URL is just memory:// (a new, empty in-process store)", u.Redacted())
	}
	return nil
}

// openMemory makes a new, empty store that lives as long as the process.
func openMemory(context.Context, string, *url.URL) (leasehold.Store, error) {
	return memory.New(nil), nil
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
