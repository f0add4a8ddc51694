package storeurl

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
)

// DefaultFile is the name of the embedded store's file in the state
// directory.
const DefaultFile = "leases.db"

// DefaultURL returns the URL of the default store: the embedded (sqlite)
// store in $XDG_STATE_HOME/leasehold/leases.db, or, when XDG_STATE_HOME is
// unset or not an absolute path (the XDG rule), in
// ~/.local/state/leasehold/leases.db. Opening it (Open, Migrate) creates
// the directory and the file; for any other sqlite URL the file's directory
// must exist.
func DefaultURL() (string, error) {
	p, err := DefaultPath()
	if err != nil {
		return "", err
	}
	return (&url.URL{Scheme: "sqlite", Path: filepath.ToSlash(p)}).String(), nil
}

// DefaultPath returns the path of the default store's file; see DefaultURL.
func DefaultPath() (string, error) {
	if d := os.Getenv("XDG_STATE_HOME"); d != "" && filepath.IsAbs(d) {
		return filepath.Join(d, "leasehold", DefaultFile), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("storeurl: no default store: %w (set XDG_STATE_HOME or HOME, or name a store URL)", err)
	}
	if !filepath.IsAbs(home) {
		return "", errors.New("storeurl: no default store: the home directory " + home + " is not an absolute path")
	}
	return filepath.Join(home, ".local", "state", "leasehold", DefaultFile), nil
}
