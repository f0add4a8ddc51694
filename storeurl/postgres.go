//go:build !leasehold_no_postgres

package storeurl

import (
	"context"
	"errors"
	"fmt"
	"net/url"

	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/postgres"
)

// postgresRow is PostgreSQL, lease rows or advisory locks; the build tag
// leasehold_no_postgres leaves it out (postgres_leftout.go).
func postgresRow() Kind {
	return Kind{
		Name: "postgres", Title: "PostgreSQL", Schemes: []string{"postgres", "postgresql"},
		Package:  "postgres",
		URLs:     []string{"postgres://...", "postgres://...?mode=advisory"},
		Usage:    "postgres://user@host/db (also postgresql://; ?mode=advisory for advisory locks)",
		CheckURL: checkPostgres, Open: openPostgres, Migrate: migratePostgres,
		FaultBackends: []string{"postgres-lease", "postgres-advisory"},
		Servers:       []string{"postgres"},
		BuildTag:      "leasehold_no_postgres",
		Token:         "row counter / sequence in the acquire statement",
		Notes:         "lease rows work behind PgBouncer; advisory mode needs a session connection",
	}
}

func checkPostgres(rawURL string) error { return postgres.CheckURL(rawURL) }

func openPostgres(ctx context.Context, rawURL string, _ *url.URL) (leasehold.Store, error) {
	s, err := postgres.OpenURL(ctx, rawURL)
	if err != nil {
		return nil, postgresErr(ctx, err)
	}
	return s, nil
}

func migratePostgres(ctx context.Context, rawURL string) error {
	if err := postgres.MigrateURL(ctx, rawURL); err != nil {
		return postgresErr(ctx, err)
	}
	return nil
}

// postgresErr marks the errors of postgres.OpenURL that are about the URL:
// those that are neither a *leasehold.StoreError (the server's answer) nor
// the context's.
func postgresErr(ctx context.Context, err error) error {
	var se *leasehold.StoreError
	if errors.As(err, &se) || ctx.Err() != nil {
		return err
	}
	return fmt.Errorf("%w: %v", ErrBadURL, err)
}
