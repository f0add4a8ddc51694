package goredis

import (
	"context"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/leasehold-go/leasehold"
	lhredis "github.com/leasehold-go/leasehold/redis"
	"github.com/leasehold-go/leasehold/redis/redlock"
)

// OpenURL opens a redis store on the server named by rawURL,
// redis://[[user]:password@]host:port[/db][?option=value...] (rediss:// for
// TLS), with go-redis's URL options plus prefix=... for Options.Prefix (see
// redis.OpenURL). It pings the server, so a server that is down or refuses
// the password fails here with an error naming it. The store owns the
// client: its Close closes it.
func OpenURL(ctx context.Context, rawURL string) (leasehold.Store, error) {
	return lhredis.OpenURL(ctx, rawURL, dial)
}

// CheckURL reports what is wrong with rawURL as OpenURL would, without
// contacting the server; nil when OpenURL can use it.
func CheckURL(rawURL string) error {
	return lhredis.CheckURL(rawURL, func(url string) error {
		_, err := redis.ParseURL(url)
		return err
	})
}

// CheckRedlockURL reports what is wrong with rawURL as OpenRedlockURL
// would, without contacting the masters; nil when it can use it.
func CheckRedlockURL(rawURL string) error {
	_, err := redlock.ParseURL(rawURL)
	return err
}

// dial is OpenURL's redis.Dialer: a go-redis client that bounds each call
// by its context, pinged once.
func dial(ctx context.Context, url string) (lhredis.Client, string, error) {
	o, err := redis.ParseURL(url)
	if err != nil {
		return nil, "", err
	}
	o.ContextTimeoutEnabled = true
	c := redis.NewClient(o)
	if err := c.Ping(ctx).Err(); err != nil {
		_ = c.Close()
		return nil, o.Addr, err
	}
	a, _ := NewClient(c) // never fails for a *redis.Client
	return a, o.Addr, nil
}

// OpenRedlockURL opens a redlock store on the masters named by rawURL,
// redlock://[[user]:password@]host:port,host:port,...[/db][?prefix=...]
// (see redlock.OpenURL), one go-redis client per master, without retries
// (the majority is the retry). It fails unless a majority of the masters
// answers. The store owns the clients.
func OpenRedlockURL(ctx context.Context, rawURL string) (leasehold.Store, error) {
	return redlock.OpenURL(ctx, rawURL, dialMaster)
}

// dialMaster is OpenRedlockURL's constructor for one master.
func dialMaster(addr string, u redlock.URL) lhredis.Client {
	a, _ := NewClient(redis.NewClient(&redis.Options{
		Addr: addr, Username: u.Username, Password: u.Password, DB: u.DB,
		MaxRetries:            -1,
		DialerRetries:         1,
		DialTimeout:           time.Second,
		ContextTimeoutEnabled: true,
	})) // never fails for a *redis.Client
	return a
}

// RedlockOptions configure a redlock store; see redlock.Options.
type RedlockOptions = redlock.Options

// NewRedlock returns a redlock store over clients, one per independent
// master. The store does not close them unless opts.CloseClients is set.
func NewRedlock[C redis.UniversalClient](clients []C, opts *RedlockOptions) (*redlock.Store, error) {
	return redlock.NewAdapted(clients, func(c C) (lhredis.Client, error) { return NewClient(c) }, opts)
}
