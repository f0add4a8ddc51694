// Package callcount counts the HTTP requests a client sends, by kind, for
// the tests and benchmarks that assert or report a store's requests per
// call (counts, unlike times, do not depend on the machine's load).
package callcount

import (
	"net/http"
	"strings"
	"sync"
	"testing"
)

// Counter counts the requests sent through it by the kind its kind
// function names, then sends them on. It is an http.RoundTripper, and
// its Do makes it the HTTP client of the Azure and AWS SDKs.
type Counter struct {
	kind   func(*http.Request) string
	client *http.Client
	mu     sync.Mutex
	n      map[string]int
}

// New returns a Counter that names each request with kind and sends it
// on through a transport of its own.
func New(kind func(*http.Request) string) *Counter {
	c := &Counter{kind: kind, n: map[string]int{}}
	c.client = &http.Client{Transport: roundTripper(c.send)}
	return c
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

var transport = http.DefaultTransport.(*http.Transport).Clone()

func (c *Counter) send(r *http.Request) (*http.Response, error) {
	k := c.kind(r)
	c.mu.Lock()
	c.n[k]++
	c.mu.Unlock()
	return transport.RoundTrip(r)
}

// RoundTrip counts r and sends it.
func (c *Counter) RoundTrip(r *http.Request) (*http.Response, error) { return c.send(r) }

// Do counts r and sends it, as an http.Client would.
func (c *Counter) Do(r *http.Request) (*http.Response, error) { return c.client.Do(r) }

// Take returns the requests counted since the last Take, in all and by
// kind.
func (c *Counter) Take() (total int, byKind map[string]int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	byKind, c.n = c.n, map[string]int{}
	for _, v := range byKind {
		total += v
	}
	return total, byKind
}

// Want fails t unless the requests counted since the last Take (which it
// is) number from lo to hi, naming what and the counts by kind.
func (c *Counter) Want(t testing.TB, what string, lo, hi int) {
	t.Helper()
	if got, by := c.Take(); got < lo || got > hi {
		t.Errorf("%s: %d requests (%v), want %d to %d", what, got, by, lo, hi)
	}
}

// Segment is the first of names that is a segment of r's URL path after
// the first one (the bucket or the account), or "?".
func Segment(r *http.Request, names ...string) string {
	parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	for i, p := range parts {
		for _, n := range names {
			if i > 0 && p == n {
				return n
			}
		}
	}
	return "?"
}

// Header is r's header name, in whatever case the client wrote its name
// (the Azure SDK sets some in lower case, bypassing Header.Set).
func Header(r *http.Request, name string) string {
	for k, v := range r.Header {
		if strings.EqualFold(k, name) && len(v) > 0 {
			return v[0]
		}
	}
	return ""
}
