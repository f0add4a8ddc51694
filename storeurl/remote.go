package storeurl

import (
	"context"
	"fmt"
	"net/url"
	"strings"

	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/remote"
)

// remoteRow is a leasehold server (`leasehold serve`) in front of any other
// store: always built in (the standard library only).
func remoteRow() Kind {
	return Kind{
		Name: "remote", Title: "a leasehold server", Schemes: []string{"leasehold+https", "leasehold+http"},
		Package:  "remote",
		URLs:     []string{"leasehold+https://host:port", "leasehold+http://127.0.0.1:port"},
		Usage:    "leasehold+https://host:port[/path]   leasehold+http://127.0.0.1:port\n" + "                        a leasehold server (leasehold serve) in front of any of these stores",
		CheckURL: checkRemote, Open: openRemote, Memory: MemoryServer,
		Token: "the served store's",
		Notes: "no store credentials in the client; the served store's capabilities",
	}
}

// checkRemote accepts leasehold+http(s)://host[:port][/path] and nothing
// else (no user, query or fragment).
func checkRemote(rawURL string) error {
	_, err := remoteBase(rawURL)
	return err
}

// remoteBase returns the server's http(s) URL that rawURL names.
func remoteBase(rawURL string) (string, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return "", err
	}
	if u.Opaque != "" || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return "", fmt.Errorf("%q: a leasehold server URL is leasehold+https://host:port[/path] (or leasehold+http:// on loopback), with nothing else", u.Redacted())
	}
	u.Scheme = strings.TrimPrefix(u.Scheme, "leasehold+")
	return u.String(), nil
}

func openRemote(ctx context.Context, rawURL string, _ *url.URL) (leasehold.Store, error) {
	base, err := remoteBase(rawURL)
	if err != nil {
		return nil, err
	}
	return remote.Open(ctx, base, nil)
}
