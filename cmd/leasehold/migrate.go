package main

import (
	"context"
	"errors"
	"fmt"
	"os/signal"
	"syscall"

	"github.com/leasehold-go/leasehold/storeurl"
)

func (a *app) migrate(args []string) int {
	fs := newFlags("migrate")
	store := storeFlag(fs)
	asJSON := jsonFlag(fs)
	if _, code, ok := a.parse(fs, "migrate", args); !ok {
		return code
	}
	u := orEnv(*store, "LEASEHOLD_STORE")
	if u == "" {
		return a.fail("migrate", usagef("--store is required (or set LEASEHOLD_STORE)"))
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	err := storeurl.Migrate(ctx, u)
	switch {
	case errors.Is(err, storeurl.ErrNoMigration) && *asJSON:
		return a.printJSON(migrateJSON{Migrated: false, Note: message(err)})
	case errors.Is(err, storeurl.ErrNoMigration):
		fmt.Fprintf(a.stderr, "leasehold migrate: nothing to do: %s\n", message(err))
		return exitOK
	case err != nil:
		return a.fail("migrate", err)
	case *asJSON:
		return a.printJSON(migrateJSON{Migrated: true})
	}
	return exitOK
}

// migrateJSON is migrate's --json output: whether the store has a schema
// (now created or upgraded), or why there was nothing to do.
type migrateJSON struct {
	Migrated bool   `json:"migrated"`
	Note     string `json:"note,omitempty"`
}
