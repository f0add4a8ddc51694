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

	"github.com/leasehold-go/leasehold/internal/benchcycle"
	"k8s.io/client-go/rest"
)

// counter counts the HTTP requests a client sends, by kind (kindOf).
type counter struct {
	mu sync.Mutex
	n  map[string]int
}

func (c *counter) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripper(func(r *http.Request) (*http.Response, error) {
		c.mu.Lock()
		c.n[kindOf(r)]++
		c.mu.Unlock()
		return rt.RoundTrip(r)
	})
}

// take returns the counts since the last take.
func (c *counter) take() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := c.n
	c.n = map[string]int{}
	return n
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// kindOf names a request to the Lease API by what it does: get (one
// Lease), list, watch, create (POST), update (PUT), patch, delete.
func kindOf(r *http.Request) string {
	switch r.Method {
	case http.MethodGet:
		switch {
		case r.URL.Query().Get("watch") == "true":
			return "watch"
		case strings.HasSuffix(r.URL.Path, "/leases"):
			return "list"
		}
		return "get"
	case http.MethodPost:
		return "create"
	case http.MethodPut:
		return "update"
	}
	return strings.ToLower(r.Method)
}

// BenchmarkCalls counts the requests of 200 x b.N cycles of each
// implementation, one goroutine on a key of its own, after a warm-up cycle
// (the Lease exists, released), and reports them per cycle by kind
// (get/cycle, update/cycle, ...) and in all (requests/cycle).
func BenchmarkCalls(b *testing.B) {
	counters := map[string]*counter{}
	cfg := func(impl string) *rest.Config {
		c := &counter{n: map[string]int{}}
		counters[impl] = c
		rc := config()
		rc.WrapTransport = c.wrap
		return rc
	}
	for _, im := range impls(b, cfg) {
		b.Run(im.Name, func(b *testing.B) {
			c := counters[im.Name]
			if c == nil {
				c = counters["store"] // the Client runs on the store's client
			}
			cycle, _ := im.New(b, fmt.Sprintf("calls/%d/%s", time.Now().UnixNano(), im.Name), false)
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
