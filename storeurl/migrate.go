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
	switch u.Scheme {
	case "postgres", "postgresql":
		return migratePostgres(ctx, rawURL)
	case "sqlite", "file":
		s, err := openSQLite(ctx, rawURL)
		if err != nil {
			return err
		}
		return s.Close()
	case "memory", "redis", "rediss", "redlock", "etcd":
		return fmt.Errorf("%w: the %s store keeps no schema", ErrNoMigration, u.Scheme)
	}
	return fmt.Errorf("%w %q in %q; %s", ErrUnknownScheme, u.Scheme, u.Redacted(), supported())
}
