package main

import (
	"context"
	"flag"

	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/storeurl"
)

// storeFlag defines --store.
func storeFlag(fs *flag.FlagSet) *string {
	return fs.String("store", "", "store URL (default $LEASEHOLD_STORE, else the embedded file)")
}

// openStore opens the store named by --store, else by LEASEHOLD_STORE, else
// the embedded store in the user's state directory (created on first use).
func openStore(ctx context.Context, flagURL string) (leasehold.Store, error) {
	u := orEnv(flagURL, "LEASEHOLD_STORE")
	if u == "" {
		var err error
		if u, err = storeurl.DefaultURL(); err != nil {
			return nil, err
		}
	}
	return storeurl.Open(ctx, u)
}
