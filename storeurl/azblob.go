//go:build !leasehold_no_azblob

package storeurl

import (
	"context"

	"github.com/leasehold-go/leasehold/azblob"
)

// azblobRow is Azure Blob leases; the build tag leasehold_no_azblob leaves
// it out, with the Azure SDK (azblob_leftout.go).
func azblobRow() Kind {
	return Kind{
		Name: "azblob", Title: "Azure Blob", Schemes: []string{"azblob"},
		Package: "azblob",
		URLs:    []string{"azblob://account/container"},
		Usage: "azblob://account/container[?endpoint=URL&auth=connstr|key|sas|default]\n" +
			"                        one blob per key; `leasehold migrate` creates the container",
		CheckURL: azblob.CheckURL, Open: openWith(azblob.OpenURL), Migrate: migrateAzblob,
		FaultBackends:   []string{"azblob"},
		FaultsOnlyNamed: "one pass takes about 12 minutes on its 15 s minimum TTL",
		Servers:         []string{"azurite"},
		BuildTag:        "leasehold_no_azblob",
		Token:           "max(counter + 1, the server's Date in µs), the counter in a never-leased counter blob's metadata bumped under If-Match after the lease acquire",
		Notes:           "TTL 15-60 s (Azure's lease range; others refused); Azure's clock ends a lease",
	}
}

// migrateAzblob creates the container that rawURL names.
func migrateAzblob(ctx context.Context, rawURL string) error {
	s, err := azblob.OpenURL(ctx, rawURL)
	if err != nil {
		return err
	}
	defer s.Close()
	return s.Migrate(ctx)
}
