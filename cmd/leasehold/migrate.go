package main

import (
	"errors"
	"fmt"
)

func (a *app) migrate(args []string) int {
	fs := newFlags("migrate")
	store := storeFlag(fs)
	if code, ok := a.parse(fs, "migrate", args); !ok {
		return code
	}
	if err := noArgs(fs); err != nil {
		return a.fail("migrate", err)
	}
	_ = store
	return a.fail("migrate", errors.New(fmt.Sprint("the PostgreSQL store is not part of this build")))
}
