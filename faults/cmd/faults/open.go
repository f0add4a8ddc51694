package main

import (
	"context"
	"errors"
	"net/url"

	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/etcd"
	"github.com/leasehold-go/leasehold/postgres"
	"github.com/leasehold-go/leasehold/redis/goredis"
	"github.com/leasehold-go/leasehold/storeurl"
)

// open is storeurl.Open, falling back to the stores' own OpenURL for the
// schemes this build of storeurl does not have yet.
func open(ctx context.Context, rawURL string) (leasehold.Store, error) {
	s, err := storeurl.Open(ctx, rawURL)
	if err == nil || !errors.Is(err, storeurl.ErrNotBuilt) {
		return s, err
	}
	u, perr := url.Parse(rawURL)
	if perr != nil {
		return nil, err
	}
	switch u.Scheme {
	case "redis":
		return goredis.OpenURL(ctx, rawURL)
	case "redlock":
		return goredis.OpenRedlockURL(ctx, rawURL)
	case "postgres", "postgresql":
		return postgres.OpenURL(ctx, rawURL)
	case "etcd":
		return etcd.OpenURL(ctx, rawURL)
	}
	return nil, err
}
