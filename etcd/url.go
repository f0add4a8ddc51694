package etcd

import (
	"context"
	"fmt"
	"log/slog"
	"net/url"
	"strings"
	"time"

	"github.com/leasehold-go/leasehold"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// DefaultDialTimeout bounds OpenURL's first contact with the cluster when
// its context has no deadline.
const DefaultDialTimeout = 5 * time.Second

// OpenURL opens a Store on its own etcd client, which Close closes. The URL
// is
//
//	etcd://[user[:password]@]host:port[,host:port...][/prefix][?idle=30s&dial_timeout=5s]
//
// for example etcd://127.0.0.1:2379,127.0.0.1:22379,127.0.0.1:32379. The
// path, if any, is the key prefix (a trailing '/' is added); idle is
// Options.IdleTimeout. Plain-text connections only. OpenURL checks that the
// cluster answers and has a leader, and that the user may read the prefix,
// before returning. The client's own log lines go to slog.Default() (as it
// is when OpenURL is called) through ZapLogger.
func OpenURL(ctx context.Context, rawURL string) (*Store, error) {
	cfg, opts, err := parseURL(rawURL)
	if err != nil {
		return nil, &leasehold.StoreError{Store: Name, Op: "open", Err: err}
	}
	cli, err := clientv3.New(cfg)
	if err != nil {
		return nil, &leasehold.StoreError{Store: Name, Op: "open", Err: fmt.Errorf("%s: %w", redact(rawURL), explain(err))}
	}
	check, cancel := context.WithTimeout(ctx, cfg.DialTimeout)
	defer cancel()
	prefix := opts.Prefix
	if prefix == "" {
		prefix = DefaultPrefix
	}
	if _, err := cli.Get(clientv3.WithRequireLeader(check), prefix, clientv3.WithPrefix(), clientv3.WithCountOnly()); err != nil {
		_ = cli.Close()
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if check.Err() != nil {
			err = fmt.Errorf("no answer with a leader within %s (unreachable, or no quorum): %w", cfg.DialTimeout, err)
		}
		return nil, &leasehold.StoreError{Store: Name, Op: "open", Err: fmt.Errorf("%s: %w", redact(rawURL), explain(err))}
	}
	s := New(cli, &opts)
	s.ownClient = true
	return s, nil
}

// parseURL turns an etcd:// URL into a client config and options.
func parseURL(raw string) (clientv3.Config, Options, error) {
	var cfg clientv3.Config
	var opts Options
	rest, ok := strings.CutPrefix(raw, "etcd://")
	if !ok {
		return cfg, opts, fmt.Errorf("%q: URL must start with etcd://", redact(raw))
	}
	rest, query, _ := strings.Cut(rest, "?")
	hosts, path, _ := strings.Cut(rest, "/")
	if at := strings.LastIndex(hosts, "@"); at >= 0 {
		user, err := url.PathUnescape(hosts[:at])
		if err != nil { // the error would quote part of the password
			return cfg, opts, fmt.Errorf("%q: bad user info (a %%-escape that is not two hex digits)", redact(raw))
		}
		cfg.Username, cfg.Password, _ = strings.Cut(user, ":")
		hosts = hosts[at+1:]
	}
	for _, h := range strings.Split(hosts, ",") {
		if h == "" || !strings.Contains(h, ":") {
			return cfg, opts, fmt.Errorf("%q: endpoint %q is not host:port", redact(raw), h)
		}
		cfg.Endpoints = append(cfg.Endpoints, "http://"+h)
	}
	if path != "" {
		p, err := url.PathUnescape(path)
		if err != nil {
			return cfg, opts, fmt.Errorf("%q: bad prefix: %w", redact(raw), err)
		}
		if !strings.HasSuffix(p, "/") {
			p += "/"
		}
		opts.Prefix = p
	}
	q, err := url.ParseQuery(query)
	if err != nil {
		return cfg, opts, fmt.Errorf("%q: bad query: %w", redact(raw), err)
	}
	cfg.DialTimeout = DefaultDialTimeout
	for k, vs := range q {
		v := vs[len(vs)-1]
		switch k {
		case "idle", "dial_timeout":
			d, err := time.ParseDuration(v)
			if err != nil {
				return cfg, opts, fmt.Errorf("%q: %s: %w", redact(raw), k, err)
			}
			if k == "idle" {
				opts.IdleTimeout = d
			} else if d > 0 {
				cfg.DialTimeout = d
			}
		default:
			return cfg, opts, fmt.Errorf("%q: unknown parameter %q (want idle or dial_timeout)", redact(raw), k)
		}
	}
	cfg.Logger = ZapLogger(slog.Default())
	return cfg, opts, nil
}

// redact hides a password in an etcd:// URL.
func redact(raw string) string {
	rest, ok := strings.CutPrefix(raw, "etcd://")
	if !ok {
		return raw
	}
	hosts, tail, _ := strings.Cut(rest, "/")
	at := strings.LastIndex(hosts, "@")
	if at < 0 {
		return raw
	}
	user, _, hasPw := strings.Cut(hosts[:at], ":")
	if !hasPw {
		return raw
	}
	out := "etcd://" + user + ":xxxxx@" + hosts[at+1:]
	if tail != "" || strings.Contains(rest, "/") {
		out += "/" + tail
	}
	return out
}

// CheckURL reports what is wrong with rawURL as an etcd store URL, as
// OpenURL would, without contacting anything; nil when OpenURL can use it.
func CheckURL(rawURL string) error {
	_, _, err := parseURL(rawURL)
	return err
}
