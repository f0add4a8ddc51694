package storeurl

import (
	"context"
	"net/url"

	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/consul"
)

func checkConsul(rawURL string) error { return consul.CheckURL(rawURL) }

func openConsul(ctx context.Context, rawURL string, _ *url.URL) (leasehold.Store, error) {
	s, err := consul.OpenURL(ctx, rawURL)
	if err != nil {
		return nil, err
	}
	return s, nil
}
