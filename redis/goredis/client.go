// Package goredis runs the leasehold redis and redlock stores over
// github.com/redis/go-redis/v9 clients.
//
// Pass the client you already have to New (a *redis.Client, including a
// Sentinel failover client, or a *redis.ClusterClient); the store never
// closes it. Or let OpenURL and OpenRedlockURL make and own the clients. This
// module pulls in go-redis only; the rueidis module is its twin for rueidis.
//
// Give your client ContextTimeoutEnabled: without it go-redis bounds a call
// by its own read and write timeouts rather than the context's deadline, so
// a renewal may outlive the holder's deadline. OpenURL and OpenRedlockURL
// set it.
//
// go-redis logs each failed dial on a process-wide logger; a program that
// reports the store's errors itself can drop those lines with
// SilenceLogger, from main.
package goredis

import (
	"context"
	"errors"
	"strings"
	"sync"

	"github.com/redis/go-redis/v9"

	lhredis "github.com/leasehold-go/leasehold/redis"
)

// Options configure the store; see redis.Options.
type Options = lhredis.Options

// New returns a leasehold redis store over c. The store does not close c.
// A *redis.Ring is refused: it shards keys by its own hash, which the
// store's multi-key scripts cannot follow.
func New(c redis.UniversalClient, opts *Options) (*lhredis.Store, error) {
	a, err := NewClient(c)
	if err != nil {
		return nil, err
	}
	return lhredis.New(a, opts)
}

// NewClient adapts c to the redis.Client interface that the redis and
// redlock stores use. Closing the adapter closes c.
func NewClient(c redis.UniversalClient) (lhredis.Client, error) {
	if c == nil {
		return nil, errors.New("goredis: nil client")
	}
	if _, ok := c.(*redis.Ring); ok {
		return nil, errors.New("goredis: a *redis.Ring client is not supported; use a *redis.Client or *redis.ClusterClient")
	}
	a := &client{c: c, addr: "redis"}
	switch v := c.(type) {
	case *redis.Client:
		a.addr = v.Options().Addr
	case *redis.ClusterClient:
		a.addr = strings.Join(v.Options().Addrs, ",")
		a.cluster = true
	}
	return a, nil
}

type client struct {
	c       redis.UniversalClient
	addr    string
	cluster bool
}

func anyArgs(args []string) []any {
	out := make([]any, len(args))
	for i, a := range args {
		out[i] = a
	}
	return out
}

func result(v any, err error) (any, error) {
	if errors.Is(err, redis.Nil) {
		return nil, nil
	}
	return v, err
}

func (a *client) EvalSha(ctx context.Context, sha string, keys, args []string) (any, error) {
	return result(a.c.EvalSha(ctx, sha, keys, anyArgs(args)...).Result())
}

func (a *client) Eval(ctx context.Context, script string, keys, args []string) (any, error) {
	return result(a.c.Eval(ctx, script, keys, anyArgs(args)...).Result())
}

func (a *client) Addr() string  { return a.addr }
func (a *client) Cluster() bool { return a.cluster }
func (a *client) Close() error  { return a.c.Close() }

// Scan implements redis.Scanner: SCAN on the server, or on every primary of
// a cluster.
func (a *client) Scan(ctx context.Context, match string, fn func(names []string) error) error {
	var mu sync.Mutex // ForEachMaster scans the primaries at once
	scan := func(ctx context.Context, c *redis.Client) error {
		var cursor uint64
		for {
			keys, next, err := c.Scan(ctx, cursor, match, 1000).Result()
			if err != nil {
				return err
			}
			if len(keys) > 0 {
				mu.Lock()
				err = fn(keys)
				mu.Unlock()
				if err != nil {
					return err
				}
			}
			if next == 0 {
				return nil
			}
			cursor = next
		}
	}
	switch c := a.c.(type) {
	case *redis.Client:
		return scan(ctx, c)
	case *redis.ClusterClient:
		return c.ForEachMaster(ctx, scan)
	}
	return errors.New("goredis: SCAN is not supported on this client type")
}
