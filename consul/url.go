package consul

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/hashicorp/consul/api"
	"github.com/leasehold-go/leasehold"
)

// DefaultDialTimeout bounds OpenURL's first contact with the agent when its
// context has no earlier deadline.
const DefaultDialTimeout = 5 * time.Second

// DefaultPort is the agent's HTTP port when the URL names none.
const DefaultPort = "8500"

// TokenEnv is the environment variable OpenURL takes the ACL token from when
// the URL has no token parameter (as the consul CLI does).
const TokenEnv = "CONSUL_HTTP_TOKEN"

// OpenURL opens a Store on its own Consul client, whose idle connections
// Close closes. The URL is
//
//	consul://host[:port][/prefix][?token=T&dc=DC&idle=30s&dial_timeout=5s]
//
// for example consul://127.0.0.1:8500/locks?token=... The host is one agent
// (the local agent, in a usual deployment; port 8500 if none); the path, if
// any, is the key prefix (a trailing '/' is added); token is the ACL token
// (default: $CONSUL_HTTP_TOKEN); dc the datacenter; idle is
// Options.IdleTimeout. Plain HTTP only. OpenURL checks that the agent answers
// and knows a leader, and that the token may read the prefix, before
// returning.
func OpenURL(ctx context.Context, rawURL string) (*Store, error) {
	p, err := parseURL(rawURL)
	if err != nil {
		return nil, &leasehold.StoreError{Store: Name, Op: "open", Err: err}
	}
	cs := &conns{}
	tr := newTransport(cs)
	clock := &serverClock{}
	cli, err := api.NewClient(&api.Config{Address: p.addr, Scheme: "http", Transport: tr, Token: p.token, Datacenter: p.dc,
		HttpClient: &http.Client{Transport: dateTap{next: tr, clock: clock}}})
	if err != nil {
		return nil, &leasehold.StoreError{Store: Name, Op: "open", Err: fmt.Errorf("%s: %w", redact(rawURL), err)}
	}
	if err := checkAgent(ctx, cli, p); err != nil {
		cs.closeAll()
		tr.CloseIdleConnections()
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, &leasehold.StoreError{Store: Name, Op: "open", Err: fmt.Errorf("%s: %w", redact(rawURL), explain(err))}
	}
	s := New(cli, &p.opts)
	s.transport, s.conns, s.clock = tr, cs, clock
	s.checkDev(ctx, p.dial)
	return s, nil
}

// checkAgent asks the agent for the cluster's leader, then reads the prefix
// (an ACL check), within p's dial timeout.
func checkAgent(ctx context.Context, cli *api.Client, p parsed) error {
	check, cancel := context.WithTimeout(ctx, p.dial)
	defer cancel()
	q := (&api.QueryOptions{}).WithContext(check)
	leader, err := cli.Status().LeaderWithQueryOptions(q)
	if err != nil {
		if check.Err() != nil && ctx.Err() == nil {
			return fmt.Errorf("no answer within %s (agent unreachable?): %w", p.dial, err)
		}
		return err
	}
	if leader == "" {
		return fmt.Errorf("the agent knows no leader: No cluster leader")
	}
	prefix := p.opts.Prefix
	if prefix == "" {
		prefix = DefaultPrefix
	}
	if _, _, err := cli.KV().Get(prefix, q); err != nil {
		return fmt.Errorf("reading the prefix %q: %w", prefix, err)
	}
	return nil
}

// parsed is a parsed consul:// URL.
type parsed struct {
	addr, token, dc string
	dial            time.Duration
	opts            Options
}

// parseURL parses a consul:// URL.
func parseURL(raw string) (parsed, error) {
	p := parsed{dial: DefaultDialTimeout}
	rest, ok := strings.CutPrefix(raw, "consul://")
	if !ok {
		return p, fmt.Errorf("%q: URL must start with consul://", redact(raw))
	}
	rest, query, _ := strings.Cut(rest, "?")
	host, path, _ := strings.Cut(rest, "/")
	if err := p.setHost(host); err != nil {
		return p, fmt.Errorf("%q: %w", redact(raw), err)
	}
	if path != "" {
		pfx, err := url.PathUnescape(path)
		if err != nil {
			return p, fmt.Errorf("%q: bad prefix: %w", redact(raw), err)
		}
		if strings.HasPrefix(pfx, "/") {
			return p, fmt.Errorf("%q: the prefix %q starts with '/'", redact(raw), pfx)
		}
		if !strings.HasSuffix(pfx, "/") {
			pfx += "/"
		}
		p.opts.Prefix = pfx
	}
	if err := p.setQuery(query); err != nil {
		return p, fmt.Errorf("%q: %w", redact(raw), err)
	}
	return p, nil
}

// setHost checks and sets the agent's address.
func (p *parsed) setHost(host string) error {
	if strings.Contains(host, "@") {
		return fmt.Errorf("user info is not supported (pass the ACL token as ?token=)")
	}
	if host == "" {
		return fmt.Errorf("no agent address (want consul://host:port)")
	}
	h, port, err := net.SplitHostPort(host)
	var ae *net.AddrError
	if errors.As(err, &ae) && ae.Err == "missing port in address" {
		h, port, err = host, DefaultPort, nil
		if inner, ok := strings.CutPrefix(h, "["); ok {
			h, ok = strings.CutSuffix(inner, "]")
			if !ok {
				err = errors.New("unclosed '['")
			}
		}
	}
	if err != nil || h == "" || strings.ContainsAny(h, "[]/?#@% ") {
		return fmt.Errorf("agent address %q is not host or host:port", host)
	}
	if n, err := strconv.ParseUint(port, 10, 16); err != nil || n == 0 {
		return fmt.Errorf("agent address %q: port %q is not a port number", host, port)
	}
	p.addr = net.JoinHostPort(h, port)
	return nil
}

// setQuery sets the URL's parameters.
func (p *parsed) setQuery(query string) error {
	q, err := url.ParseQuery(query)
	if err != nil {
		return fmt.Errorf("bad query: %w", err)
	}
	p.token = os.Getenv(TokenEnv)
	for k, vs := range q {
		v := vs[len(vs)-1]
		switch k {
		case "token":
			p.token = v
		case "dc":
			p.dc = v
		case "idle", "dial_timeout":
			d, err := time.ParseDuration(v)
			if err != nil {
				return fmt.Errorf("%s: %w", k, err)
			}
			if k == "idle" {
				p.opts.IdleTimeout = d
			} else if d > 0 {
				p.dial = d
			}
		default:
			return fmt.Errorf("unknown parameter %q (want token, dc, idle or dial_timeout)", k)
		}
	}
	return nil
}

// redact hides the ACL token in a consul:// URL: the value of every query
// parameter whose name, unescaped, contains "token" (in any case), or
// cannot be unescaped, whether it is separated by '&' or ';' (which the URL
// parser refuses, in an error that shows the URL).
func redact(raw string) string {
	base, query, ok := strings.Cut(raw, "?")
	if !ok {
		return raw
	}
	var b strings.Builder
	b.WriteString(base)
	b.WriteByte('?')
	start := 0
	for i := 0; i <= len(query); i++ {
		if i < len(query) && query[i] != '&' && query[i] != ';' {
			continue
		}
		part := query[start:i]
		if k, _, hasValue := strings.Cut(part, "="); hasValue {
			uk, err := url.QueryUnescape(k)
			if err != nil || strings.Contains(strings.ToLower(uk), "token") {
				part = k + "=xxxxx"
			}
		}
		b.WriteString(part)
		if i < len(query) {
			b.WriteByte(query[i])
		}
		start = i + 1
	}
	return b.String()
}

// CheckURL reports what is wrong with rawURL as a consul store URL, as
// OpenURL would, without contacting anything; nil when OpenURL can use it.
func CheckURL(rawURL string) error {
	_, err := parseURL(rawURL)
	return err
}
