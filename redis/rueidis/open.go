package rueidis

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"strings"
	"time"

	"github.com/redis/rueidis"

	"github.com/leasehold-go/leasehold"
	lhredis "github.com/leasehold-go/leasehold/redis"
	"github.com/leasehold-go/leasehold/redis/redlock"
)

// OpenURL opens a redis store on the server named by rawURL,
// redis://[[user]:password@]host:port[/db][?option=value...] (rediss:// for
// TLS), with rueidis's URL options plus prefix=... for Options.Prefix.
// rueidis connects at once, so a server that is down or refuses the
// password fails here with an error naming it. The store owns the client:
// its Close closes it.
func OpenURL(ctx context.Context, rawURL string) (leasehold.Store, error) {
	rest, prefix, err := takePrefix(rawURL)
	if err != nil {
		return nil, openError("", err)
	}
	o, err := rueidis.ParseURL(rest)
	if err != nil {
		return nil, openError("", err)
	}
	o.DisableCache = true // the store reads nothing a client-side cache could serve
	c, err := rueidis.NewClient(o)
	if err != nil {
		return nil, openError(strings.Join(o.InitAddress, ","), err)
	}
	if err := c.Do(ctx, c.B().Ping().Build()).Error(); err != nil {
		c.Close()
		return nil, openError(strings.Join(o.InitAddress, ","), err)
	}
	s, err := New(c, &Options{Prefix: prefix, CloseClient: true})
	if err != nil {
		c.Close()
		return nil, err
	}
	return s, nil
}

// OpenRedlockURL opens a redlock store on the masters named by rawURL,
// redlock://[[user]:password@]host:port,host:port,...[/db][?prefix=...],
// one lazily connected rueidis client per master (see NewLazyClient), so
// it opens with a minority of masters down. It fails unless a majority
// answers a PING. The store owns the clients.
func OpenRedlockURL(ctx context.Context, rawURL string) (leasehold.Store, error) {
	u, err := redlock.ParseURL(rawURL)
	if err != nil {
		return nil, &leasehold.StoreError{Store: redlock.Name, Op: "open", Err: err}
	}
	s, err := redlock.Dial(ctx, u, func(h string) lhredis.Client {
		return NewLazyClient(rueidis.ClientOption{
			InitAddress: []string{h}, Username: u.Username, Password: u.Password, SelectDB: u.DB,
			DisableCache:      true,
			ForceSingleClient: true, // a master is a standalone server: no cluster probing
			Dialer:            net.Dialer{Timeout: time.Second},
		})
	})
	if err != nil {
		return nil, err // never a typed nil in the interface
	}
	return s, nil
}

// RedlockOptions configure a redlock store; see redlock.Options.
type RedlockOptions = redlock.Options

// NewRedlock returns a redlock store over clients, one per independent
// master. The store does not close them unless opts.CloseClients is set.
func NewRedlock(clients []rueidis.Client, opts *RedlockOptions) (*redlock.Store, error) {
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

func openError(addr string, err error) error {
	if addr != "" {
		err = fmt.Errorf("%s: %w", addr, err)
	}
	return &leasehold.StoreError{Store: lhredis.Name, Op: "open", Err: err}
}

// takePrefix removes the prefix=... query option, which is leasehold's
// and unknown to rueidis.
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
