package rueidis

import (
	"context"
	"net"
	"strings"
	"time"

	"github.com/redis/rueidis"

	"github.com/leasehold-go/leasehold"
	lhredis "github.com/leasehold-go/leasehold/redis"
	"github.com/leasehold-go/leasehold/redis/redlock"
)

// OpenURL opens a redis store on the server named by rawURL,
// redis://[[user]:password@]host:port[/db][?option=value...] (rediss:// for
// TLS), with rueidis's URL options plus prefix=... for Options.Prefix (see
// redis.OpenURL). rueidis connects at once, so a server that is down or
// refuses the password fails here with an error naming it. The store owns
// the client: its Close closes it.
func OpenURL(ctx context.Context, rawURL string) (leasehold.Store, error) {
	return lhredis.OpenURL(ctx, rawURL, dial)
}

// CheckURL reports what is wrong with rawURL as OpenURL would, without
// contacting the server; nil when OpenURL can use it.
func CheckURL(rawURL string) error {
	return lhredis.CheckURL(rawURL, func(url string) error {
		_, err := rueidis.ParseURL(url)
		return err
	})
}

// dial is OpenURL's redis.Dialer: a rueidis client without client-side
// caching, pinged once.
func dial(ctx context.Context, url string) (lhredis.Client, string, error) {
	o, err := rueidis.ParseURL(url)
	if err != nil {
		return nil, "", err
	}
	o.DisableCache = true // the store reads nothing a client-side cache could serve
	addr := strings.Join(o.InitAddress, ",")
	c, err := rueidis.NewClient(o)
	if err != nil {
		return nil, addr, err
	}
	if err := c.Do(ctx, c.B().Ping().Build()).Error(); err != nil {
		c.Close()
		return nil, addr, err
	}
	a, _ := NewClient(c) // never fails for a non-nil client
	return a, addr, nil
}

// OpenRedlockURL opens a redlock store on the masters named by rawURL,
// redlock://[[user]:password@]host:port,host:port,...[/db][?prefix=...]
// (see redlock.OpenURL), one lazily connected rueidis client per master
// (see NewLazyClient), so it opens with a minority of masters down. It
// fails unless a majority answers. The store owns the clients.
func OpenRedlockURL(ctx context.Context, rawURL string) (leasehold.Store, error) {
	return redlock.OpenURL(ctx, rawURL, dialMaster)
}

// dialMaster is OpenRedlockURL's constructor for one master.
func dialMaster(addr string, u redlock.URL) lhredis.Client {
	return NewLazyClient(rueidis.ClientOption{
		InitAddress: []string{addr}, Username: u.Username, Password: u.Password, SelectDB: u.DB,
		DisableCache:      true,
		ForceSingleClient: true, // a master is a standalone server: no cluster probing
		Dialer:            net.Dialer{Timeout: time.Second},
	})
}

// RedlockOptions configure a redlock store; see redlock.Options.
type RedlockOptions = redlock.Options

// NewRedlock returns a redlock store over clients, one per independent
// master. The store does not close them unless opts.CloseClients is set.
func NewRedlock(clients []rueidis.Client, opts *RedlockOptions) (*redlock.Store, error) {
	return redlock.NewAdapted(clients, NewClient, opts)
}
