package redis

import (
	"context"
	"fmt"
	"net/url"
	"strings"

	"github.com/leasehold-go/leasehold"
)

// Dialer is an adapter's half of OpenURL. It parses url in its client
// library's own syntax (a redis:// or rediss:// URL without leasehold's
// options), makes a client and checks that the server answers, so that a
// server that is down or refuses the password fails at open. addr names the
// server or servers for the error message; it is set when err is too,
// unless url did not parse.
type Dialer func(ctx context.Context, url string) (c Client, addr string, err error)

// OpenURL opens a store on the server named by rawURL: the URL the client
// library takes, plus leasehold's prefix=... option for Options.Prefix,
// which is removed before dial sees the URL. The store owns the client: its
// Close closes it. Errors are *leasehold.StoreError, naming the server when
// it is known.
//
// The adapters' OpenURL functions call it with their Dialer; use theirs.
func OpenURL(ctx context.Context, rawURL string, dial Dialer) (leasehold.Store, error) {
	rest, prefix, err := cutPrefix(rawURL)
	if err != nil {
		return nil, openError("", err)
	}
	c, addr, err := dial(ctx, rest)
	if err != nil {
		return nil, openError(addr, err)
	}
	s, err := New(c, &Options{Prefix: prefix, CloseClient: true})
	if err != nil {
		_ = c.Close()
		return nil, err
	}
	return s, nil
}

func openError(addr string, err error) error {
	if addr != "" {
		err = fmt.Errorf("%s: %w", addr, err)
	}
	return &leasehold.StoreError{Store: Name, Op: "open", Err: err}
}

// cutPrefix removes the prefix=... query option, which is leasehold's and
// unknown to the client libraries.
func cutPrefix(rawURL string) (rest, prefix string, err error) {
	base, query, ok := strings.Cut(rawURL, "?")
	if !ok {
		return rawURL, "", nil
	}
	q, err := url.ParseQuery(query)
	if err != nil {
		return "", "", fmt.Errorf("bad query in URL: %w", err)
	}
	prefix = q.Get("prefix")
	q.Del("prefix")
	if len(q) == 0 {
		return base, prefix, nil
	}
	return base + "?" + q.Encode(), prefix, nil
}

// CheckURL reports what is wrong with rawURL as OpenURL would, without
// contacting anything: leasehold's options, then the rest by parse, the
// client library's own URL parser. nil when OpenURL can use it.
//
// The adapters' CheckURL functions call it with their parser; use theirs.
func CheckURL(rawURL string, parse func(url string) error) error {
	rest, _, err := cutPrefix(rawURL)
	if err != nil {
		return err
	}
	return parse(rest)
}
