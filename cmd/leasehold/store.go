package main

import (
	"context"
	"errors"
	"flag"
	"io/fs"
	"os"

	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/sqlite"
	"github.com/leasehold-go/leasehold/storeurl"
)

// storeFlag defines --store.
func storeFlag(fs *flag.FlagSet) *string {
	return fs.String("store", "", "store URL (default $LEASEHOLD_STORE, else the embedded file)")
}

// openStore opens the store named by --store, else by LEASEHOLD_STORE, else
// the embedded store in the user's state directory (created on first use).
func openStore(ctx context.Context, flagURL string) (leasehold.Store, error) {
	u, err := storeURL(flagURL)
	if err != nil {
		return nil, err
	}
	st, err := storeurl.Open(ctx, u)
	if err != nil {
		return nil, err // a nil Store: callers close only what opened
	}
	return st, nil
}

// storeURL returns the URL of the store that openStore opens.
func storeURL(flagURL string) (string, error) {
	if u := orEnv(flagURL, "LEASEHOLD_STORE"); u != "" {
		return u, nil
	}
	return storeurl.DefaultURL()
}

// noEmbeddedFile reports whether the store URL names the embedded store's
// file and that file does not exist yet: no lease was ever taken in it, and
// opening it would create it (and, for the default store, its folder).
func noEmbeddedFile(flagURL string) bool {
	u, err := storeURL(flagURL)
	if err != nil {
		return false
	}
	path, _, err := sqlite.ParseURL(u)
	if err != nil {
		return false // not the embedded store, or a bad URL that Open reports
	}
	_, err = os.Stat(path)
	return errors.Is(err, fs.ErrNotExist)
}
