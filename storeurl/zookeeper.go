package storeurl

import (
	"context"
	"net/url"

	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/zookeeper"
)

func checkZooKeeper(rawURL string) error { return zookeeper.CheckURL(rawURL) }

func openZooKeeper(ctx context.Context, rawURL string, _ *url.URL) (leasehold.Store, error) {
	s, err := zookeeper.OpenURL(ctx, rawURL)
	if err != nil {
		return nil, err // never the typed nil *Store: a non-nil Store with its error
	}
	return s, nil
}
