package storeurl

import (
	"context"

	"github.com/leasehold-go/leasehold"
)

func openRedis(ctx context.Context, rawURL string) (leasehold.Store, error) {
	return nil, errNotBuilt("redis", "github.com/leasehold-go/leasehold/redis/goredis")
}

func openRedlock(ctx context.Context, rawURL string) (leasehold.Store, error) {
	return nil, errNotBuilt("redlock", "github.com/leasehold-go/leasehold/redis/goredis")
}

func openPostgres(ctx context.Context, rawURL string) (leasehold.Store, error) {
	return nil, errNotBuilt("postgres", "github.com/leasehold-go/leasehold/postgres")
}

func openEtcd(ctx context.Context, rawURL string) (leasehold.Store, error) {
	return nil, errNotBuilt("etcd", "github.com/leasehold-go/leasehold/etcd")
}
