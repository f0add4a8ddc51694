package redis

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/redis/internal/core"
)

// Name is the store's name in Info and errors.
const Name = "redis"

// TokenCaveat is the assumption behind the store's tokens, reported in Info.
const TokenCaveat = "tokens are max(per-key counter + 1, the Redis server's TIME in microseconds), " +
	"so they keep increasing when a restart without persistence, an eviction or a failover loses the counter, " +
	"provided the server's clock never steps backwards (across restarts, and between a primary and the replica " +
	"promoted in its place, by more than the failover takes)"

// Options configure a Store. The zero value is ready to use.
type Options struct {
	// Prefix starts the name of every Redis key and channel the store
	// uses; empty means "leasehold:". It must not hold '{' or '}'. Stores
	// with different prefixes share nothing.
	Prefix string
	// CloseClient makes Store.Close close the client too. The OpenURL
	// functions set it; leave it false for a client you own.
	CloseClient bool
}

// Store is a leasehold.Store on one Redis deployment: a server (with its
// replicas, through a failover-aware client) or a Redis Cluster. It also
// implements leasehold.Notifier and leasehold.BatchRenewer.
type Store struct {
	c      Client
	node   core.Node
	notify *core.Notifier
	close  bool
	closed atomic.Bool
}

var (
	_ leasehold.Store        = (*Store)(nil)
	_ leasehold.Notifier     = (*Store)(nil)
	_ leasehold.BatchRenewer = (*Store)(nil)
)

// New returns a store over c. It does no I/O: an unreachable server shows
// in the first call. It fails only on invalid options.
func New(c Client, opts *Options) (*Store, error) {
	if c == nil {
		return nil, &leasehold.StoreError{Store: Name, Op: "open", Err: errors.New("nil client")}
	}
	var o Options
	if opts != nil {
		o = *opts
	}
	names, err := core.NewNames(o.Prefix)
	if err != nil {
		return nil, &leasehold.StoreError{Store: Name, Op: "open", Err: err}
	}
	return &Store{
		c:      c,
		node:   core.Node{Client: c, Names: names, Cluster: c.Cluster()},
		notify: core.NewNotifier(listener{c}),
		close:  o.CloseClient,
	}, nil
}

// listener adapts Client to core.Listener.
type listener struct{ c Client }

func (l listener) Listen(ctx context.Context, deliver func(string)) (core.Subscription, error) {
	return l.c.Listen(ctx, deliver)
}

// Info reports the store's bounds. Tokens are safe fences under the
// assumption in TokenCaveat.
func (s *Store) Info() leasehold.Info {
	return leasehold.Info{
		Name:        Name,
		MinTTL:      time.Millisecond,
		MaxTTL:      leasehold.MaxTTL,
		SafeTokens:  true,
		TokenCaveat: TokenCaveat,
		// The grant is the key's value on the server: owner and token renew
		// or release it from any process.
		PortableGrants: true,
	}
}

func (s *Store) check(ctx context.Context, op string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if s.closed.Load() {
		return &leasehold.StoreError{Store: Name, Op: op, Err: leasehold.ErrClosed}
	}
	return nil
}

// fail wraps a failed call; the caller's context's error is returned as is.
func (s *Store) fail(ctx context.Context, op, key string, err error) error {
	if cerr := ctx.Err(); cerr != nil {
		return cerr
	}
	return &leasehold.StoreError{Store: Name, Op: op, Err: fmt.Errorf("key %q on %s: %w", key, s.c.Addr(), err)}
}

// Acquire claims the key with one script call (one round trip): if the
// lease is free or expired it stores owner, label and a new token with the
// TTL (rounded up to a millisecond), else it returns a *leasehold.HeldError
// with the holder's label, token and remaining time.
func (s *Store) Acquire(ctx context.Context, req leasehold.AcquireRequest) (leasehold.Grant, error) {
	if err := leasehold.CheckAcquire(req, s.Info()); err != nil {
		return leasehold.Grant{}, err
	}
	if err := s.check(ctx, "acquire"); err != nil {
		return leasehold.Grant{}, err
	}
	ms := core.TTLMillis(req.TTL)
	tok, held, err := s.node.Acquire(ctx, req.Key, req.Owner, req.Label, ms)
	if err != nil {
		return leasehold.Grant{}, s.fail(ctx, "acquire", req.Key, err)
	}
	if held != nil {
		return leasehold.Grant{}, &leasehold.HeldError{Key: req.Key, Label: held.Label, Token: held.Token, Remaining: held.Remaining}
	}
	return leasehold.Grant{
		Key: req.Key, Owner: req.Owner, Label: req.Label, Token: tok,
		TTL: time.Duration(ms) * time.Millisecond,
	}, nil
}

// Renew extends the lease by g.TTL if g.Owner and g.Token still hold it.
// A lease that expired is not renewed, even if nobody took it since: Redis
// has deleted it, and the renewal returns ErrNotHeld.
func (s *Store) Renew(ctx context.Context, g leasehold.Grant) (leasehold.Grant, error) {
	if err := leasehold.CheckRenew(g, s.Info()); err != nil {
		return leasehold.Grant{}, err
	}
	if err := s.check(ctx, "renew"); err != nil {
		return leasehold.Grant{}, err
	}
	ms := core.TTLMillis(g.TTL)
	ok, err := s.node.Renew(ctx, g.Key, g.Owner, g.Token, ms)
	if err != nil {
		return leasehold.Grant{}, s.fail(ctx, "renew", g.Key, err)
	}
	if !ok {
		return leasehold.Grant{}, fmt.Errorf("renew %q: %w", g.Key, leasehold.ErrNotHeld)
	}
	g.TTL = time.Duration(ms) * time.Millisecond
	return g, nil
}

// Release deletes the lease if g.Owner and g.Token still hold it, and
// publishes on the key's channel so that waiters wake at once.
func (s *Store) Release(ctx context.Context, g leasehold.Grant) error {
	if err := leasehold.CheckRelease(g); err != nil {
		return err
	}
	if err := s.check(ctx, "release"); err != nil {
		return err
	}
	ok, err := s.node.Release(ctx, g.Key, g.Owner, g.Token)
	if err != nil {
		return s.fail(ctx, "release", g.Key, err)
	}
	if !ok {
		return fmt.Errorf("release %q: %w", g.Key, leasehold.ErrNotHeld)
	}
	return nil
}

// Holder reports the current holder of key.
func (s *Store) Holder(ctx context.Context, key string) (leasehold.Holder, error) {
	if err := leasehold.CheckHolder(key); err != nil {
		return leasehold.Holder{}, err
	}
	if err := s.check(ctx, "holder"); err != nil {
		return leasehold.Holder{}, err
	}
	l, err := s.node.Holder(ctx, key)
	if err != nil {
		return leasehold.Holder{}, s.fail(ctx, "holder", key, err)
	}
	if l == nil {
		return leasehold.Holder{}, fmt.Errorf("holder %q: %w", key, leasehold.ErrNotHeld)
	}
	return leasehold.Holder{Key: key, Label: l.Label, Token: l.Token, Remaining: l.Remaining}, nil
}

// Close closes the store's pub/sub connection, and the client when the
// store owns it. Leases are not released; their TTLs end them.
func (s *Store) Close() error {
	if s.closed.Swap(true) {
		return nil
	}
	err := s.notify.Close()
	if s.close {
		if cerr := s.c.Close(); cerr != nil && err == nil {
			err = cerr
		}
	}
	if err != nil {
		return &leasehold.StoreError{Store: Name, Op: "close", Err: err}
	}
	return nil
}
