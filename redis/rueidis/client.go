// Package rueidis runs the leasehold redis and redlock stores over
// github.com/redis/rueidis clients, whose automatic pipelining lets many
// goroutines share a connection.
//
// Pass the client you already have to New (standalone, sentinel or
// cluster); the store never closes it. Or let OpenURL make and own one.
// This module pulls in rueidis only; the goredis module is its twin for
// go-redis.
package rueidis

import (
	"context"
	"errors"
	"slices"
	"strings"

	"github.com/redis/rueidis"

	lhredis "github.com/leasehold-go/leasehold/redis"
)

// Options configure the store; see redis.Options.
type Options = lhredis.Options

// New returns a leasehold redis store over c. The store does not close c.
func New(c rueidis.Client, opts *Options) (*lhredis.Store, error) {
	a, err := NewClient(c)
	if err != nil {
		return nil, err
	}
	return lhredis.New(a, opts)
}

// NewClient adapts c to the redis.Client interface that the redis and
// redlock stores use. Closing the adapter closes c.
func NewClient(c rueidis.Client) (lhredis.Client, error) {
	if c == nil {
		return nil, errors.New("rueidis: nil client")
	}
	addrs := make([]string, 0, 1)
	for a := range c.Nodes() {
		addrs = append(addrs, a)
	}
	slices.Sort(addrs)
	addr := strings.Join(addrs, ",")
	if addr == "" {
		addr = "redis"
	}
	return &client{c: c, addr: addr, cluster: c.Mode() == rueidis.ClientModeCluster}, nil
}

type client struct {
	c       rueidis.Client
	addr    string
	cluster bool
}

func result(r rueidis.RedisResult) (any, error) {
	v, err := r.ToAny()
	if rueidis.IsRedisNil(err) {
		return nil, nil
	}
	return v, err
}

func (a *client) EvalSha(ctx context.Context, sha string, keys, args []string) (any, error) {
	cmd := a.c.B().Evalsha().Sha1(sha).Numkeys(int64(len(keys))).Key(keys...).Arg(args...).Build()
	return result(a.c.Do(ctx, cmd))
}

func (a *client) Eval(ctx context.Context, script string, keys, args []string) (any, error) {
	cmd := a.c.B().Eval().Script(script).Numkeys(int64(len(keys))).Key(keys...).Arg(args...).Build()
	return result(a.c.Do(ctx, cmd))
}

func (a *client) Addr() string  { return a.addr }
func (a *client) Cluster() bool { return a.cluster }
func (a *client) Close() error  { a.c.Close(); return nil }

// Scan implements redis.Scanner: SCAN on the server, or on every node of a
// cluster (names found on a replica too are reported twice; List dedupes).
func (a *client) Scan(ctx context.Context, match string, fn func(names []string) error) error {
	nodes := map[string]rueidis.Client{a.addr: a.c}
	if a.cluster {
		nodes = a.c.Nodes()
	}
	for _, c := range nodes {
		var cursor uint64
		for {
			e, err := c.Do(ctx, c.B().Scan().Cursor(cursor).Match(match).Count(1000).Build()).AsScanEntry()
			if err != nil {
				return err
			}
			if len(e.Elements) > 0 {
				if err := fn(e.Elements); err != nil {
					return err
				}
			}
			if e.Cursor == 0 {
				break
			}
			cursor = e.Cursor
		}
	}
	return nil
}
