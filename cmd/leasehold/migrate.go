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
	if code, ok := a.parse(fs, "migrate", args); !ok {
		return code
	}
	u := orEnv(*store, "LEASEHOLD_STORE")
	err := noArgs(fs)
	if err == nil && u == "" {
		err = usagef("--store is required (or set LEASEHOLD_STORE)")
	}
	if err != nil {
		return a.fail("migrate", err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	err = storeurl.Migrate(ctx, u)
	if errors.Is(err, storeurl.ErrNoMigration) {
		fmt.Fprintf(a.stderr, "leasehold migrate: nothing to do: %s\n", message(err))
		return exitOK
	}
	if err != nil {
		return a.fail("migrate", err)
	}
	return exitOK
}
