package storeurl

import (
	"context"
	"net/url"

	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/azblob"
)

func checkAzblob(rawURL string) error { return azblob.CheckURL(rawURL) }

func openAzblob(ctx context.Context, rawURL string, _ *url.URL) (leasehold.Store, error) {
	s, err := azblob.OpenURL(ctx, rawURL)
	if err != nil {
		return nil, err // never the typed nil *Store: a non-nil Store with its error
	}
	return s, nil
}

func migrateAzblob(ctx context.Context, rawURL string) error {
	s, err := azblob.OpenURL(ctx, rawURL)
	if err != nil {
		return err
	}
	defer s.Close()
	return s.Migrate(ctx)
}
