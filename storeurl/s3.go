package storeurl

import (
	"context"
	"net/url"

	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/s3"
)

func checkS3(rawURL string) error { return s3.CheckURL(rawURL) }

func openS3(ctx context.Context, rawURL string, _ *url.URL) (leasehold.Store, error) {
	s, err := s3.OpenURL(ctx, rawURL)
	if err != nil {
		return nil, err // never the typed nil *Store: a non-nil Store with its error
	}
	return s, nil
}

func migrateS3(ctx context.Context, rawURL string) error { return s3.MigrateURL(ctx, rawURL) }
