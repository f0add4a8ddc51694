package storeurl

import (
	"context"
	"errors"
	"fmt"
	"net/url"

	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/etcd"
	"github.com/leasehold-go/leasehold/postgres"
	"github.com/leasehold-go/leasehold/redis/goredis"
)

// The stores on servers. Each opener checks that the server answers, so a
// wrong address or password is reported by Open; each checker is the
// store's own URL parser.

func checkRedis(rawURL string) error    { return goredis.CheckURL(rawURL) }
func checkRedlock(rawURL string) error  { return goredis.CheckRedlockURL(rawURL) }
func checkPostgres(rawURL string) error { return postgres.CheckURL(rawURL) }
func checkEtcd(rawURL string) error     { return etcd.CheckURL(rawURL) }

func openRedis(ctx context.Context, rawURL string, _ *url.URL) (leasehold.Store, error) {
	s, err := goredis.OpenURL(ctx, rawURL)
	if err != nil {
		return nil, err
	}
	return s, nil
}

func openRedlock(ctx context.Context, rawURL string, _ *url.URL) (leasehold.Store, error) {
	s, err := goredis.OpenRedlockURL(ctx, rawURL)
	if err != nil {
		return nil, err
	}
	return s, nil
}

func openPostgres(ctx context.Context, rawURL string, _ *url.URL) (leasehold.Store, error) {
	s, err := postgres.OpenURL(ctx, rawURL)
	if err != nil {
		return nil, postgresErr(ctx, err)
	}
	return s, nil
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

func openEtcd(ctx context.Context, rawURL string, _ *url.URL) (leasehold.Store, error) {
	s, err := etcd.OpenURL(ctx, rawURL)
	if err != nil {
		return nil, err
	}
	return s, nil
}

func migratePostgres(ctx context.Context, rawURL string) error {
	if err := postgres.MigrateURL(ctx, rawURL); err != nil {
		return postgresErr(ctx, err)
	}
	return nil
}
