package storeurl

import (
	"context"
	"net/url"

	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/zookeeper"
)

func checkZooKeeper(rawURL string) error { return zookeeper.CheckURL(rawURL) }

func openZooKeeper(ctx context.Context, rawURL string, _ *url.URL) (leasehold.Store, error) {
	return zookeeper.OpenURL(ctx, rawURL)
}
