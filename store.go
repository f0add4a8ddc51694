package leasehold

import (
	"context"
	"time"
)

// Store is the contract a backend implements: the atomic-claim primitive.
// It is deliberately small; the lease lifecycle (renewal timing, deadlines,
// waiting, cancellation) lives once in [Client].
//
// All methods are safe for concurrent use. Keys and TTLs reaching a Store
// from [Client] have been validated, but a Store is also called directly (by
// the CLI's one-shot commands, by users' own clients), so each method begins
// with exactly one of [CheckAcquire], [CheckRenew], [CheckRelease] or
// [CheckHolder]: the bounds and their messages live there, once.
//
// Errors: Acquire returns a [*HeldError] when another owner holds the key.
// Renew and Release return [ErrNotHeld] when the grant is no longer the
// caller's (expired and taken, released, or never held). Any failure to reach
// or understand the backend is wrapped in a [*StoreError]; an error from the
// caller's context is returned as is.
type Store interface {
	// Acquire claims req.Key for req.Owner if it is free or its lease has
	// expired by the store's clock, in one atomic step, and mints a token
	// strictly greater than every earlier token for the key.
	Acquire(ctx context.Context, req AcquireRequest) (Grant, error)

	// Renew extends g by g.TTL if g.Owner and g.Token still hold g.Key.
	// It returns the renewed grant (same key, owner and token).
	// A store may renew a lease that expired but that nobody has taken since,
	// keeping the token; it says so in its documentation.
	Renew(ctx context.Context, g Grant) (Grant, error)

	// Release ends g if g.Owner and g.Token still hold g.Key. It never
	// removes another owner's lease; it returns ErrNotHeld in that case and
	// changes nothing.
	Release(ctx context.Context, g Grant) error

	// Holder reports who holds key now. It returns ErrNotHeld (wrapped or
	// not) when nobody does.
	Holder(ctx context.Context, key string) (Holder, error)

	// Info describes the store: its name, TTL bounds and whether its
	// tokens are safe fences.
	Info() Info

	// Close releases the store's own resources (connections, sessions).
	// It does not release leases; their TTLs end them.
	Close() error
}

// AcquireRequest is what a client asks a store for.
type AcquireRequest struct {
	Key string
	// Owner is the caller's unguessable owner id (at least 128 random
	// bits), fresh for every store attempt: Client never sends one owner id
	// in two Acquire calls, so a store may clean up an attempt whose answer
	// was lost by its owner id without touching a later grant. A clean-up
	// must never match on less than the owner (the key alone), and should
	// match the token too where it is known.
	Owner string
	Label string        // a human-readable holder label (host:pid), shown to others
	TTL   time.Duration // validated against Info.MinTTL and Info.MaxTTL
}

// Grant is a lease as the store granted it.
type Grant struct {
	Key   string
	Owner string
	Label string
	// Token is the fencing token: strictly greater than every earlier
	// token for Key on this store (see Info.SafeTokens for the caveats).
	Token uint64
	// TTL is the lease duration the store applied, measured by the store's
	// clock from when it processed the request. A store may round it up to
	// its granularity, or report less than asked when part of it is already
	// spent (Redlock's validity time); the client's first deadline uses the
	// smaller of the two.
	TTL time.Duration
	// Lost, if not nil, is closed by the store when it learns the grant is
	// gone without being asked: a session store's session expired, or the
	// connection that holds an advisory lock broke.
	Lost <-chan struct{}
	// Private is the store's own state for this grant (a session, a
	// dedicated connection, a revision). Clients pass it back untouched.
	Private any
}

// Holder describes the current holder of a key. It never reveals the owner
// id, which is the holder's proof of ownership.
type Holder struct {
	Key       string
	Label     string
	Token     uint64
	Remaining time.Duration // time left by the store's clock when read
	// MaxRemaining, when Remaining is 0 because the store does not know it
	// (a Consul session's timer lives on its leader), bounds how long the
	// key can stay held from now if nobody renews it; 0 if not known.
	MaxRemaining time.Duration
}

// Info describes a store. Stores report it; clients never assume it.
type Info struct {
	// Name is the store's kind ("memory", "sqlite", "redis", ...).
	Name string
	// MinTTL and MaxTTL bound the TTLs the store accepts. The client
	// additionally caps every TTL at [MaxTTL] (24 h).
	MinTTL, MaxTTL time.Duration
	// SafeTokens reports whether tokens are strictly increasing per key
	// under every failure the store's documentation covers (restart,
	// failover). When false, TokenCaveat says what breaks them and a token
	// must not be used as a fence.
	SafeTokens  bool
	TokenCaveat string
	// PortableGrants reports that a grant lives in the store alone: any
	// process holding the key, owner and token can renew or release it,
	// and it outlives the process that acquired it (until its TTL ends).
	// It is false when a grant is bound to the acquiring process's own
	// state (a session connection holding an advisory lock, per-master
	// state on Redlock, an in-process map), so a one-shot acquire that
	// exits, or a renew from another process, cannot work; tools such as
	// the CLI's one-shot acquire/renew/release refuse such stores. The
	// zero value is the safe answer for a store that does not say.
	PortableGrants bool
}

// Notifier is an optional capability: a store that can tell a waiter that a
// key may have become free (Redis pub/sub, PostgreSQL LISTEN/NOTIFY, an etcd
// watch). The client subscribes before each acquire attempt, so a release
// between a failed attempt and the wait is not missed, and still backs off
// with jitter in case a notification is lost.
type Notifier interface {
	// Subscribe returns a channel that receives a value (non-blocking,
	// coalesced) whenever key may have become free, and a function that
	// ends the subscription.
	Subscribe(ctx context.Context, key string) (<-chan struct{}, func(), error)
}

// Watcher is an optional capability: a store with a native watch that
// signals every change of a key's holder (a grant, a release, an expiry),
// so that observers (election.Observe) need not poll. Watch returns once the
// watch is established, so a change after it returns is never missed; the
// channel receives a value (non-blocking, coalesced) per change, and also
// when the watch ends on its own, after which the caller reads the holder
// and watches again.
type Watcher interface {
	Watch(ctx context.Context, key string) (<-chan struct{}, func(), error)
}

// Waiter is an optional capability: a store that queues waiters itself, in
// FIFO order (ZooKeeper sequential nodes, etcd revisions). The client calls
// AcquireWait instead of polling when the caller is prepared to wait. It
// returns when the grant is made, or with the context's error.
type Waiter interface {
	AcquireWait(ctx context.Context, req AcquireRequest) (Grant, error)
}

// BatchRenewer is an optional capability: a store that renews many grants in
// one round trip. The client renews all the leases it holds on such a store
// with the same TTL in one call per renew period.
type BatchRenewer interface {
	// RenewMany renews each grant as Renew would. It returns one result per
	// grant, in order; err is set only when the whole batch failed.
	RenewMany(ctx context.Context, gs []Grant) ([]RenewResult, error)
}

// RenewResult is the outcome of renewing one grant in a batch.
type RenewResult struct {
	Grant Grant
	Err   error // nil, ErrNotHeld, or a per-grant failure
}

// LostExplainer is an optional capability: a store that can say why it
// closed a grant's Lost channel (its session expired, its server lost its
// data). The client ends the grant's leases with that reason (wrapped with
// ErrNotHeld) instead of a generic one; nil means no more is known.
type LostExplainer interface {
	LostReason(g Grant) error
}

// Lister is an optional capability: a store that can list current holders
// of keys with a prefix (for `leasehold status --prefix`).
type Lister interface {
	List(ctx context.Context, prefix string) ([]Holder, error)
}
