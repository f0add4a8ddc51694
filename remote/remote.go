// Package remote is a leasehold.Store that takes its leases through a
// leasehold server (package serve, `leasehold serve`) over HTTP, so that a
// process needs no credentials of the backing store, only the server's URL.
//
// The store offers the capabilities the server reports for its backend: it
// is always a leasehold.Notifier (the server's watch stream signals
// releases made through it, and the backend's own notifications when it
// has them) and a leasehold.BatchRenewer (one request renews up to 32
// grants; the server renews them in one call when the backend batches);
// it is a leasehold.Lister, a leasehold.Watcher and a leasehold.Waiter
// (the backend's own FIFO queue) when the backend is. Its Info is the backend's, named "remote(<backend>)".
//
// Grants of a backend whose grants are bound to a process (Info's
// PortableGrants false: sessions, advisory locks, the memory store) are
// kept by the server under a handle that this store carries in the
// grant's Private: a restart of the server ends them (the next renewal is
// refused with ErrNotHeld, so the lease is lost and its context cancelled).
//
// Several servers in front of one backend (Options.Servers) are tried in
// order: a request goes to the server that last answered, and to the next
// on a connection error or a 503, never after a 4xx. An acquire goes to
// another server only if it was never sent (its outcome is never
// guessed at: an acquire whose answer was lost is not sent again). A grant
// a server keeps under a handle renews and releases through that server
// only (the server's doc says why); a portable grant through any.
package remote

import (
	"context"
	"crypto/tls"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/internal/wire"
)

// Options configure a Store. The zero value is ready to use.
type Options struct {
	// HTTPClient sends the requests; nil means a client of the store's own
	// (with a transport cloned from http.DefaultTransport), whose idle
	// connections Close closes.
	HTTPClient *http.Client
	// Token, if set, is sent as a bearer token in every request.
	Token string
	// TokenFrom says where Token came from (the path of its file), for
	// the error of a refused token, which never shows the token.
	TokenFrom string
	// Servers are the URLs (each of the form Open takes) of further
	// servers in front of the same backend, tried in order after Open's
	// when one cannot be reached or its backend fails (see the package
	// doc for which requests fail over, and which do not).
	Servers []string
	// TLSConfig, if set, is the TLS configuration of the store's own
	// client (ignored with HTTPClient): the CAs it trusts (RootCAs) and
	// the client certificate it shows (Certificates) to a server that
	// asks for one (`leasehold serve --tls-client-ca`).
	TLSConfig *tls.Config
}

// Store is a leasehold.Store over a leasehold server. Open returns it
// inside a value that also has the optional capabilities the server
// offers; use that value (a leasehold.Store), not a *Store, to keep them.
type Store struct {
	bases   []*url.URL   // the servers' URLs, each ending in "/"
	cur     atomic.Int32 // the index of the server to ask first
	hc      *http.Client
	own     *conns // the connections of the store's own client; nil for Options.HTTPClient
	token   string
	from    string // Options.TokenFrom
	info    leasehold.Info
	caps    wire.Capabilities
	ctx     context.Context // ends at Close
	cancel  context.CancelFunc
	mu      sync.Mutex     // orders the start of a stream with Close
	closed  bool           // guarded by mu
	streams sync.WaitGroup // the watch streams' readers
}

var (
	_ leasehold.Store        = (*Store)(nil)
	_ leasehold.Notifier     = (*Store)(nil)
	_ leasehold.BatchRenewer = (*Store)(nil)
)

// Open reaches the server at baseURL (http:// or https://, with an
// optional path prefix), reads its /v1/info, and returns a store with the
// capabilities it reports. opts may be nil.
func Open(ctx context.Context, baseURL string, opts *Options) (leasehold.Store, error) {
	s, err := open(ctx, baseURL, opts)
	if err != nil {
		return nil, err
	}
	return withCaps(s), nil
}

func open(ctx context.Context, baseURL string, opts *Options) (*Store, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	s := &Store{hc: o.HTTPClient, token: o.Token, from: o.TokenFrom}
	for _, raw := range append([]string{baseURL}, o.Servers...) {
		u, err := serverURL(raw)
		if err != nil {
			return nil, err
		}
		s.bases = append(s.bases, u)
	}
	if s.hc == nil {
		s.own = &conns{}
		s.hc = &http.Client{Transport: s.own.transport(o.TLSConfig)}
	}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	s.info.Name = "remote"
	var wi wire.Info
	if err := s.call(ctx, "open", "GET", "v1/info", nil, &wi); err != nil {
		_ = s.Close()
		return nil, err
	}
	s.info = leasehold.Info{Name: "remote(" + wi.Name + ")", MinTTL: wire.Ms(wi.MinTTLMs), MaxTTL: wire.Ms(wi.MaxTTLMs),
		SafeTokens: wi.SafeTokens, TokenCaveat: wi.TokenCaveat, PortableGrants: wi.PortableGrants}
	s.caps = wi.Capabilities
	return s, nil
}

// serverURL parses a server's URL, http:// or https://, with an optional
// path prefix and nothing else.
func serverURL(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return nil, &leasehold.StoreError{Store: "remote", Op: "open", Err: fmt.Errorf(
			"%q is not a server URL: want http://host:port or https://host:port, with an optional path and nothing else", redact(raw))}
	}
	if !strings.HasSuffix(u.Path, "/") {
		u.Path += "/"
	}
	return u, nil
}

// redact drops the userinfo of a URL for an error message.
func redact(raw string) string {
	if u, err := url.Parse(raw); err == nil {
		return u.Redacted()
	}
	return "the URL"
}

// Info describes the backend, as the server reported it when the store
// was opened.
func (s *Store) Info() leasehold.Info { return s.info }

// Close ends the store's watch streams and requests in flight, and closes
// its own client's connections. Leases taken through it are not
// released; their TTLs end them.
func (s *Store) Close() error {
	s.mu.Lock()
	s.closed = true // no stream starts after this
	s.mu.Unlock()
	s.cancel()
	s.streams.Wait()
	if s.own != nil {
		s.own.closeAll()
	}
	return nil
}
