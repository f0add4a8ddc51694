package storeurl

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"slices"
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
			"                        a leasehold server (leasehold serve) in front of any of these stores;\n" +
			"                        also cert_file=PATH&key_file=PATH (mTLS), ca_file=PATH, server=HOST:PORT (more servers)",
		CheckURL: checkRemote, Open: openRemote, Memory: MemoryServer,
		// the fault harness runs leasehold serve in front of four stores
		// (faults/harness/backend_remote.go); Servers are theirs.
		FaultBackends: []string{"remote-sqlite", "remote-redis", "remote-postgres", "remote-etcd"},
		Servers:       []string{"redis", "postgres", "etcd"},
		Token:         "the served store's",
		Notes:         "no store credentials in the client; the served store's capabilities",
	}
}

// remoteURL is what a leasehold server URL names.
type remoteURL struct {
	bases     []string // the servers' http(s) URLs, in the order to try them
	tokenFile string   // the file of the bearer token; "" for none
	certFile  string   // the client certificate (with keyFile); "" for none
	keyFile   string
	caFile    string // the CAs that sign the server's certificate; "" for the system's
}

// remoteForm is the form of a leasehold server URL, for refusals.
const remoteForm = "a leasehold server URL is leasehold+https://host:port[/path][?token_file=PATH] " +
	"(or leasehold+http:// on loopback), with the parameters token_file, cert_file and key_file (both or neither), " +
	"ca_file, and server=HOST:PORT (repeated: more servers, tried in order after the first), and nothing else"

// singleParams are the parameters given at most once.
var singleParams = []string{"token_file", "cert_file", "key_file", "ca_file"}

// checkRemote accepts leasehold+http(s)://host[:port][/path] with the
// parameters of remoteForm, and nothing else.
func checkRemote(rawURL string) error {
	_, err := parseRemote(rawURL)
	return err
}

// parseRemote reads a leasehold server URL. The servers of server= share
// the first's scheme and path.
func parseRemote(rawURL string) (remoteURL, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return remoteURL{}, err
	}
	bad := func(format string, args ...any) (remoteURL, error) {
		return remoteURL{}, fmt.Errorf("%q: %s; %s", u.Redacted(), fmt.Sprintf(format, args...), remoteForm)
	}
	q, err := url.ParseQuery(u.RawQuery)
	switch {
	case err != nil:
		return bad("its query: %v", err)
	case u.Opaque != "" || u.Host == "":
		return bad("no host")
	case u.User != nil:
		return bad("it has userinfo (the token goes in token_file)")
	case u.Fragment != "":
		return bad("it has a fragment")
	}
	for name, vs := range q {
		switch {
		case name != "server" && !slices.Contains(singleParams, name):
			return bad("unknown parameter %q", name)
		case len(vs) > 1 && name != "server":
			return bad("%s is given %d times", name, len(vs))
		case slices.Contains(vs, ""):
			return bad("%s is empty", name)
		}
	}
	if (q.Get("cert_file") == "") != (q.Get("key_file") == "") {
		return bad("cert_file and key_file go together (the client certificate and its key)")
	}
	r := remoteURL{tokenFile: q.Get("token_file"), certFile: q.Get("cert_file"), keyFile: q.Get("key_file"), caFile: q.Get("ca_file")}
	u.Scheme, u.RawQuery = strings.TrimPrefix(u.Scheme, "leasehold+"), ""
	r.bases = append(r.bases, u.String())
	for _, hp := range q["server"] {
		if host, port, err := net.SplitHostPort(hp); err != nil || host == "" || port == "" {
			return bad("server=%q is not HOST:PORT", hp)
		}
		v := *u
		v.Host = hp
		r.bases = append(r.bases, v.String())
	}
	return r, nil
}

// openRemote opens the servers' store, with the bearer token of the URL's
// token_file (its first line, spaces trimmed) and the TLS files it names.
func openRemote(ctx context.Context, rawURL string, _ *url.URL) (leasehold.Store, error) {
	r, err := parseRemote(rawURL)
	if err != nil {
		return nil, err
	}
	fail := func(err error) error { return &leasehold.StoreError{Store: "remote", Op: "open", Err: err} }
	opts := remote.Options{Servers: r.bases[1:]}
	if r.tokenFile != "" {
		if opts.Token, err = readToken(r.tokenFile); err != nil {
			return nil, fail(err)
		}
		opts.TokenFrom = r.tokenFile
	}
	if opts.TLSConfig, err = remoteTLS(r); err != nil {
		return nil, fail(err)
	}
	return remote.Open(ctx, r.bases[0], &opts)
}

// readToken reads the bearer token of a token file: its first line,
// spaces trimmed. Its errors name the file, never what it holds.
func readToken(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("the token file: %w", err)
	}
	line, _, _ := strings.Cut(string(b), "\n")
	if tok := strings.TrimSpace(line); tok != "" {
		return tok, nil
	}
	return "", fmt.Errorf("the token file %s: its first line holds no token", path)
}

// remoteTLS returns the TLS configuration of the URL's cert_file, key_file
// and ca_file, or nil when it names none. Its errors name the file.
func remoteTLS(r remoteURL) (*tls.Config, error) {
	if r.certFile == "" && r.caFile == "" {
		return nil, nil
	}
	c := &tls.Config{MinVersion: tls.VersionTLS12}
	if r.certFile != "" {
		cert, err := tls.LoadX509KeyPair(r.certFile, r.keyFile)
		if err != nil {
			return nil, fmt.Errorf("the client certificate (cert_file %s, key_file %s): %w", r.certFile, r.keyFile, err)
		}
		c.Certificates = []tls.Certificate{cert}
	}
	if r.caFile != "" {
		b, err := os.ReadFile(r.caFile)
		if err != nil {
			return nil, fmt.Errorf("ca_file: %w", err)
		}
		c.RootCAs = x509.NewCertPool()
		if !c.RootCAs.AppendCertsFromPEM(b) {
			return nil, errors.New("ca_file " + r.caFile + ": no PEM certificate in the file")
		}
	}
	return c, nil
}
