package zookeeper

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"strings"
	"time"
)

// OpenURL opens a Store on the ensemble a URL names:
//
//	zk://[user:password@]host:port[,host:port...][/chroot][?idle=30s&dial_timeout=5s]
//
// for example zk://127.0.0.1:2181,127.0.0.1:2182,127.0.0.1:2183/locks. The
// scheme zookeeper:// is the same. The path, if any, is the node under
// which the store keeps its keys (Options.Base: the client-side chroot);
// without one it is /leasehold. user:password authenticates with
// ZooKeeper's digest scheme (Options.Auth); idle is Options.IdleTimeout
// and dial_timeout Options.DialTimeout. OpenURL asks a server for the
// ensemble's session bounds before returning, so an unreachable ensemble is
// an error here.
func OpenURL(ctx context.Context, rawURL string) (*Store, error) {
	opts, err := parseURL(rawURL)
	if err != nil {
		return nil, err
	}
	return New(ctx, opts)
}

// CheckURL reports what is wrong with rawURL as a zookeeper store URL, as
// OpenURL would, without contacting anything; nil when OpenURL can use it.
func CheckURL(rawURL string) error {
	_, err := parseURL(rawURL)
	return err
}

// parseURL turns a zk:// URL into options.
func parseURL(raw string) (Options, error) {
	var opts Options
	rest, ok := strings.CutPrefix(raw, "zk://")
	if !ok {
		rest, ok = strings.CutPrefix(raw, "zookeeper://")
	}
	if !ok {
		return opts, fmt.Errorf("%q: URL must start with zk:// or zookeeper://", redact(raw))
	}
	rest, query, _ := strings.Cut(rest, "?")
	hosts, chroot, _ := strings.Cut(rest, "/")
	if at := strings.LastIndex(hosts, "@"); at >= 0 {
		user, err := url.PathUnescape(hosts[:at])
		if err != nil || !strings.Contains(user, ":") {
			return opts, fmt.Errorf("%q: user info must be user:password", redact(raw))
		}
		opts.Auth = user
		hosts = hosts[at+1:]
	}
	for _, h := range strings.Split(hosts, ",") {
		if _, port, err := net.SplitHostPort(h); err != nil || port == "" {
			return opts, fmt.Errorf("%q: server %q is not host:port", redact(raw), h)
		}
		opts.Servers = append(opts.Servers, h)
	}
	if chroot != "" {
		p, err := url.PathUnescape(chroot)
		if err != nil {
			return opts, fmt.Errorf("%q: bad chroot: %w", redact(raw), err)
		}
		if opts.Base, err = cleanBase(p); err != nil {
			return opts, fmt.Errorf("%q: %w", redact(raw), err)
		}
	}
	q, err := url.ParseQuery(query)
	if err != nil {
		return opts, fmt.Errorf("%q: bad query: %w", redact(raw), err)
	}
	for k, vs := range q {
		d, err := time.ParseDuration(vs[len(vs)-1])
		if err != nil && (k == "idle" || k == "dial_timeout") {
			return opts, fmt.Errorf("%q: %s: %w", redact(raw), k, err)
		}
		switch k {
		case "idle":
			opts.IdleTimeout = d
		case "dial_timeout":
			opts.DialTimeout = d
		default:
			return opts, fmt.Errorf("%q: unknown parameter %q (want idle or dial_timeout)", redact(raw), k)
		}
	}
	return opts, nil
}

// redact hides a password in a zk:// URL.
func redact(raw string) string {
	scheme, rest, ok := strings.Cut(raw, "://")
	if !ok {
		return raw
	}
	hosts, tail, hasTail := strings.Cut(rest, "/")
	at := strings.LastIndex(hosts, "@")
	if at < 0 {
		return raw
	}
	user, _, hasPw := strings.Cut(hosts[:at], ":")
	if !hasPw {
		return raw
	}
	out := scheme + "://" + user + ":xxxxx@" + hosts[at+1:]
	if hasTail {
		out += "/" + tail
	}
	return out
}
