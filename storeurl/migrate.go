package storeurl

import (
	"context"
	"errors"
	"fmt"
)

// ErrNoMigration: the store named by the URL keeps no schema, so there is
// nothing to migrate.
var ErrNoMigration = errors.New("storeurl: the store has no schema to migrate")

// Migrate creates or upgrades the schema of the store that rawURL names, for
// deployments where the application may not run DDL. It is idempotent. For
// PostgreSQL it runs the postgres package's migration; the embedded store
// creates its schema when it is opened, so Migrate opens and closes it. For
// a store without a schema it returns an error wrapping ErrNoMigration.
func Migrate(ctx context.Context, rawURL string) error {
	u, err := parse(rawURL)
	if err != nil {
		return err
	}
	k, err := lookup(u)
	if err != nil {
		return err
	}
	if k.Migrate == nil {
		return fmt.Errorf("%w: the %s store keeps no schema", ErrNoMigration, k.Name)
	}
	if _, _, err := check(rawURL); err != nil {
		return err
	}
	return k.Migrate(ctx, rawURL)
}
