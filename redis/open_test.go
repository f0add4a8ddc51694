package redis

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/leasehold-go/leasehold"
)

// fakeClient is a Client that records Close; OpenURL does no I/O of its own.
type fakeClient struct {
	Client
	closed bool
}

func (c *fakeClient) Cluster() bool { return false }
func (c *fakeClient) Addr() string  { return "fake:1" }
func (c *fakeClient) Close() error  { c.closed = true; return nil }

// OpenURL takes leasehold's prefix option out of the URL, passes the rest
// to the adapter's Dialer, and owns the client it gets.
func TestOpenURLPrefix(t *testing.T) {
	for _, tc := range []struct{ raw, rest, prefix string }{
		{"redis://h:1/0", "redis://h:1/0", ""},
		{"redis://h:1/0?prefix=app:", "redis://h:1/0", "app:"},
		{"redis://h:1/0?dial_timeout=1s&prefix=app:", "redis://h:1/0?dial_timeout=1s", "app:"},
	} {
		c := &fakeClient{}
		var got string
		st, err := OpenURL(context.Background(), tc.raw, func(_ context.Context, url string) (Client, string, error) {
			got = url
			return c, "h:1", nil
		})
		if err != nil {
			t.Fatalf("OpenURL(%q): %v", tc.raw, err)
		}
		if got != tc.rest {
			t.Errorf("OpenURL(%q) dialled %q, want %q", tc.raw, got, tc.rest)
		}
		if p := st.(*Store).node.Names.Prefix(); tc.prefix != "" && p != tc.prefix {
			t.Errorf("OpenURL(%q): prefix %q, want %q", tc.raw, p, tc.prefix)
		}
		if err := st.Close(); err != nil || !c.closed {
			t.Errorf("OpenURL(%q): Close = %v, client closed %v; want the store to close it", tc.raw, err, c.closed)
		}
	}
}

// Every failure is a store error for "open", naming the server when the
// Dialer knows it; a bad prefix closes the client that was made.
func TestOpenURLErrors(t *testing.T) {
	refused := errors.New("connection refused")
	c := &fakeClient{}
	for _, tc := range []struct {
		raw  string
		dial Dialer
		want string
	}{
		{"redis://h:1/0?prefix=%zz", nil, "bad query"},
		{"redis://h:1/0", func(context.Context, string) (Client, string, error) { return nil, "", errors.New("bad URL") }, "bad URL"},
		{"redis://h:1/0", func(context.Context, string) (Client, string, error) { return nil, "h:1", refused }, "h:1: connection refused"},
		{"redis://h:1/0?prefix={x}", func(context.Context, string) (Client, string, error) { return c, "h:1", nil }, "{"},
	} {
		_, err := OpenURL(context.Background(), tc.raw, tc.dial)
		var se *leasehold.StoreError
		if !errors.As(err, &se) || se.Store != Name || se.Op != "open" || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("OpenURL(%q) = %v, want a redis open error containing %q", tc.raw, err, tc.want)
		}
	}
	if !c.closed {
		t.Error("OpenURL with a bad prefix left the client open")
	}
}
