package postgres_test

import (
	"context"
	"log"

	"github.com/leasehold-go/leasehold/postgres"
)

// Open a PostgreSQL store (it needs a server, so this example compiles but
// does not run). The store never creates its table: MigrateURL does, once
// and idempotently (or `leasehold migrate --store URL`, or MigrationSQL's
// DDL run by a DBA).
func ExampleOpenURL() {
	ctx := context.Background()
	const url = "postgres://app:secret@127.0.0.1:5432/app"
	// Create the lease table: idempotent; or `leasehold migrate --store URL`.
	if err := postgres.MigrateURL(ctx, url); err != nil {
		log.Fatal(err)
	}
	store, err := postgres.OpenURL(ctx, url)
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close()
}
