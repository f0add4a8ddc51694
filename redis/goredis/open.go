package goredis

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/leasehold-go/leasehold"
	lhredis "github.com/leasehold-go/leasehold/redis"
	"github.com/leasehold-go/leasehold/redis/redlock"
)

// OpenURL opens a redis store on the server named by rawURL,
// redis://[[user]:password@]host:port[/db][?option=value...] (rediss:// for
// TLS), with go-redis's URL options plus prefix=... for Options.Prefix.
// It pings the server, so a server that is down or refuses the password
// fails here with an error naming it. The store owns the client: its Close
// closes it.
func OpenURL(ctx context.Context, rawURL string) (leasehold.Store, error) {
	rest, prefix, err := takePrefix(rawURL)
	if err != nil {
		return nil, openError(lhredis.Name, "", err)
	}
	o, err := redis.ParseURL(rest)
	if err != nil {
		return nil, openError(lhredis.Name, "", err)
	}
	o.ContextTimeoutEnabled = true
	c := redis.NewClient(o)
	if err := c.Ping(ctx).Err(); err != nil {
		_ = c.Close()
		return nil, openError(lhredis.Name, o.Addr, err)
	}
	s, err := New(c, &Options{Prefix: prefix, CloseClient: true})
	if err != nil {
		_ = c.Close()
		return nil, err
	}
	return s, nil
}

// OpenRedlockURL opens a redlock store on the masters named by rawURL,
// redlock://[[user]:password@]host:port,host:port,...[/db][?prefix=...],
// one go-redis client per master, without retries (the majority is the
// retry). It pings every master and fails unless a majority answers. The
// store owns the clients.
func OpenRedlockURL(ctx context.Context, rawURL string) (leasehold.Store, error) {
	u, err := redlock.ParseURL(rawURL)
	if err != nil {
		return nil, openError(redlock.Name, "", err)
	}
	s, err := redlock.Dial(ctx, u, func(h string) lhredis.Client {
		a, _ := NewClient(redis.NewClient(&redis.Options{
			Addr: h, Username: u.Username, Password: u.Password, DB: u.DB,
			MaxRetries:            -1,
			DialerRetries:         1,
			DialTimeout:           time.Second,
			ContextTimeoutEnabled: true,
		}))
		return a
	})
	if err != nil {
		return nil, err // never a typed nil in the interface
	}
	return s, nil
}

func openError(store, addr string, err error) error {
	if addr != "" {
		err = fmt.Errorf("%s: %w", addr, err)
	}
	return &leasehold.StoreError{Store: store, Op: "open", Err: err}
}

// takePrefix removes the prefix=... query option, which is leasehold's
// and unknown to the client libraries.
func takePrefix(rawURL string) (rest, prefix string, err error) {
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

// RedlockOptions configure a redlock store; see redlock.Options.
type RedlockOptions = redlock.Options

// NewRedlock returns a redlock store over clients, one per independent
// master. The store does not close them unless opts.CloseClients is set.
func NewRedlock[C redis.UniversalClient](clients []C, opts *RedlockOptions) (*redlock.Store, error) {
	var cs []lhredis.Client
	for _, c := range clients {
		a, err := NewClient(c)
		if err != nil {
			return nil, &leasehold.StoreError{Store: redlock.Name, Op: "open", Err: err}
		}
		cs = append(cs, a)
	}
	return redlock.New(cs, opts)
}
