package bench

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
	"github.com/leasehold-go/leasehold/azblob"
	"github.com/leasehold-go/leasehold/internal/benchcycle"
)

// counter counts the HTTP requests a client sends, by kind (kindOf).
type counter struct {
	mu sync.Mutex
	n  map[string]int
}

func (c *counter) Do(r *http.Request) (*http.Response, error) {
	c.mu.Lock()
	c.n[kindOf(r)]++
	c.mu.Unlock()
	return http.DefaultClient.Do(r)
}

// take returns the counts since the last take.
func (c *counter) take() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := c.n
	c.n = map[string]int{}
	return n
}

// kindOf names a request to the Blob API by what it does and to which of
// a key's blobs: "lease-acquire keys", "metadata tokens", "get keys"
// (properties), "put keys" (upload), ...
func kindOf(r *http.Request) string {
	what := strings.ToLower(r.Method)
	switch comp := r.URL.Query().Get("comp"); {
	case comp == "lease":
		what = "lease-" + strings.ToLower(header(r, "x-ms-lease-action"))
	case comp != "":
		what = comp
	case r.Method == http.MethodHead:
		what = "get"
	}
	parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	blob := "?"
	if len(parts) >= 3 {
		blob = parts[2] // account/container/keys|tokens|peers/...
	}
	return what + "-" + blob
}

// header is r's header name, whatever the case the SDK wrote it in.
func header(r *http.Request, name string) string {
	for k, v := range r.Header {
		if strings.EqualFold(k, name) && len(v) > 0 {
			return v[0]
		}
	}
	return ""
}

// BenchmarkCalls counts the requests of 200 x b.N cycles of each
// implementation, one goroutine on a key of its own, after a warm-up cycle
// (the blobs exist, released), and reports them per cycle by kind and in
// all (requests/cycle). Calls, unlike times, are deterministic: the
// README's per-call table comes from this.
func BenchmarkCalls(b *testing.B) {
	c := &counter{n: map[string]int{}}
	cc, err := container.NewClientFromConnectionString(azurite.ConnectionString(), "calls",
		&container.ClientOptions{ClientOptions: azcore.ClientOptions{Transport: c}})
	if err != nil {
		b.Fatal(err)
	}
	st := azblob.New(cc)
	if err := st.Migrate(context.Background()); err != nil {
		b.Fatal(err)
	}
	lc := benchcycle.NewClient(b, st)
	for _, im := range []benchcycle.Impl{
		{Name: "raw-sdk", New: raw(cc)},
		{Name: "leasehold", New: benchcycle.Store(st, ttl)},
		{Name: "lh-client", New: benchcycle.Client(lc, ttl)},
	} {
		b.Run(im.Name, func(b *testing.B) {
			cycle, _ := im.New(b, fmt.Sprintf("calls-%d-%s", time.Now().UnixNano(), im.Name), false)
			ctx := context.Background()
			if err := runCycles(ctx, cycle, 1); err != nil {
				b.Fatal(err)
			}
			c.take()
			n := 200 * b.N
			if err := runCycles(ctx, cycle, n); err != nil {
				b.Fatal(err)
			}
			counts, total := c.take(), 0
			for _, k := range slices.Sorted(maps.Keys(counts)) {
				b.ReportMetric(float64(counts[k])/float64(n), k+"/cycle")
				total += counts[k]
			}
			b.ReportMetric(float64(total)/float64(n), "requests/cycle")
		})
	}
}

// runCycles runs n cycles, each tried again while it returns ErrHeld.
func runCycles(ctx context.Context, c benchcycle.Cycle, n int) error {
	for range n {
		for {
			err := c(ctx)
			if err == nil {
				break
			}
			if !errors.Is(err, benchcycle.ErrHeld) {
				return err
			}
		}
	}
	return nil
}
