package storeurl

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"strings"

	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/remote"
)

// remoteRow is a leasehold server (`leasehold serve`) in front of any other
// store: always built in (the standard library only).
func remoteRow() Kind {
	return Kind{
		Name: "remote", Title: "a leasehold server", Schemes: []string{"leasehold+https", "leasehold+http"},
		Package: "remote",
		URLs:    []string{"leasehold+https://host:port?token_file=PATH", "leasehold+http://127.0.0.1:port"},
		Usage: "leasehold+https://host:port[/path][?token_file=PATH]   leasehold+http://127.0.0.1:port\n" +
			"                        a leasehold server (leasehold serve) in front of any of these stores",
		CheckURL: checkRemote, Open: openRemote, Memory: MemoryServer,
		// the fault harness runs leasehold serve in front of four stores
		// (faults/harness/backend_remote.go); Servers are theirs.
		FaultBackends: []string{"remote-sqlite", "remote-redis", "remote-postgres", "remote-etcd"},
		Servers:       []string{"redis", "postgres", "etcd"},
		Token:         "the served store's",
		Notes:         "no store credentials in the client; the served store's capabilities",
	}
}

// checkRemote accepts leasehold+http(s)://host[:port][/path], with an
// optional token_file parameter, and nothing else.
func checkRemote(rawURL string) error {
	_, _, err := remoteBase(rawURL)
	return err
}

// remoteBase returns the server's http(s) URL that rawURL names, and the
// path of the file that holds the bearer token ("" for none).
func remoteBase(rawURL string) (base, tokenFile string, err error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return "", "", err
	}
	q, err := url.ParseQuery(u.RawQuery)
	if err != nil || u.Opaque != "" || u.Host == "" || u.User != nil || u.Fragment != "" || len(q) > 1 || len(q["token_file"]) != len(q) || len(q["token_file"]) > 1 {
		return "", "", fmt.Errorf("%q: a leasehold server URL is leasehold+https://host:port[/path][?token_file=PATH] (or leasehold+http:// on loopback), with nothing else", u.Redacted())
	}
	tokenFile = q.Get("token_file")
	u.Scheme, u.RawQuery = strings.TrimPrefix(u.Scheme, "leasehold+"), ""
	return u.String(), tokenFile, nil
}

// openRemote opens the server's store, with the bearer token of the URL's
// token_file (its first line, spaces trimmed).
func openRemote(ctx context.Context, rawURL string, _ *url.URL) (leasehold.Store, error) {
	base, tokenFile, err := remoteBase(rawURL)
	if err != nil {
		return nil, err
	}
	var opts remote.Options
	if tokenFile != "" {
		b, err := os.ReadFile(tokenFile)
		if err != nil {
			return nil, &leasehold.StoreError{Store: "remote", Op: "open", Err: fmt.Errorf("the token file: %w", err)}
		}
		line, _, _ := strings.Cut(string(b), "\n")
		opts.Token = strings.TrimSpace(line)
	}
	return remote.Open(ctx, base, &opts)
}
