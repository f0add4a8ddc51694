package storeurl

import (
	"context"
	"fmt"
	"net/url"

	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/memory"
	"github.com/leasehold-go/leasehold/sqlite"
)

func openSQLite(ctx context.Context, rawURL string, _ *url.URL) (leasehold.Store, error) {
	if _, _, err := sqlite.ParseURL(rawURL); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadURL, err)
	}
	s, err := sqlite.OpenURL(ctx, rawURL)
	if err != nil {
		return nil, err
	}
	return s, nil
}

// openMemory accepts memory: and memory:// with nothing else: every Open
// makes a new, empty store that lives as long as the process.
func openMemory(_ context.Context, _ string, u *url.URL) (leasehold.Store, error) {
	if u.Opaque != "" || u.Host != "" || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return nil, fmt.Errorf("%w: %q: a memory store URL is just memory:// (a new, empty in-process store)", ErrBadURL, u.Redacted())
	}
	return memory.New(nil), nil
}
