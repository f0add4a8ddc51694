package bench

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
	"github.com/leasehold-go/leasehold/azblob"
	"github.com/leasehold-go/leasehold/internal/benchcycle"
	"github.com/leasehold-go/leasehold/internal/callcount"
)

// kindOf names a request to the Blob API by what it does and to which of
// a key's blobs: "lease-acquire-keys", "metadata-keys", "get-tokens" (a
// read of the properties), "put-keys" (an upload), ...
func kindOf(r *http.Request) string {
	what := strings.ToLower(r.Method)
	switch comp := r.URL.Query().Get("comp"); {
	case comp == "lease":
		what = "lease-" + strings.ToLower(callcount.Header(r, "x-ms-lease-action"))
	case comp != "":
		what = comp
	case r.Method == http.MethodHead:
		what = "get"
	}
	return what + "-" + callcount.Segment(r, "keys", "tokens", "peers")
}

// BenchmarkCalls counts the requests per cycle of the SDK loop, the store
// and the Client (benchcycle.Calls): the README's per-call table.
func BenchmarkCalls(b *testing.B) {
	c := callcount.New(kindOf)
	cc, err := container.NewClientFromConnectionString(azurite.ConnectionString(), "calls",
		&container.ClientOptions{ClientOptions: azcore.ClientOptions{Transport: c}})
	if err != nil {
		b.Fatal(err)
	}
	st := azblob.New(cc)
	if err := st.Migrate(context.Background()); err != nil {
		b.Fatal(err)
	}
	benchcycle.Calls(b, c, []benchcycle.Impl{
		{Name: "raw-sdk", New: raw(cc)},
		{Name: "leasehold", New: benchcycle.Store(st, ttl)},
		{Name: "lh-client", New: benchcycle.Client(benchcycle.NewClient(b, st), ttl)},
	})
}
