package storeurl

import (
	"context"
	"fmt"
	"net/url"

	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/memory"
	"github.com/leasehold-go/leasehold/sqlite"
)

func checkSQLite(rawURL string) error {
	_, _, err := sqlite.ParseURL(rawURL)
	return err
}

func openSQLite(ctx context.Context, rawURL string, _ *url.URL) (leasehold.Store, error) {
	s, err := sqlite.OpenURL(ctx, rawURL)
	if err != nil {
		return nil, err
	}
	return s, nil
}

// checkMemory accepts memory: and memory:// with nothing else.
func checkMemory(rawURL string) error {
	u, err := url.Parse(rawURL)
	if err != nil {
		return err
	}
	if u.Opaque != "" || u.Host != "" || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return fmt.Errorf("%q: a memory store URL is just memory:// (a new, empty in-process store)", u.Redacted())
	}
	return nil
}

// openMemory makes a new, empty store that lives as long as the process.
func openMemory(context.Context, string, *url.URL) (leasehold.Store, error) {
	return memory.New(nil), nil
}
