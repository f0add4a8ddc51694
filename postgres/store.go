package postgres

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/leasehold-go/leasehold"
)

// closeTimeout bounds the goodbye sent when the store discards a connection.
const closeTimeout = 5 * time.Second

// Store is a leasehold.Store on PostgreSQL. It also implements
// leasehold.Notifier (LISTEN/NOTIFY), leasehold.BatchRenewer and
// leasehold.Lister (lease-row mode only). It is safe for concurrent use.
type Store struct {
	q         querier
	opts      Options
	name      string // "postgres" or "postgres-advisory"
	tableName string // quoted and qualified, for messages
	st        statements
	channel   string // the NOTIFY channel of this table
	lockNS    string // salt of the advisory lock ids
	ownPool   *pgxpool.Pool
	lis       *listener

	mu     sync.Mutex
	closed bool
	held   map[*advLease]struct{} // advisory leases with a live session
}

var (
	_ leasehold.Store        = (*Store)(nil)
	_ leasehold.Notifier     = (*Store)(nil)
	_ leasehold.BatchRenewer = (*Store)(nil)
	_ leasehold.Lister       = (*Store)(nil)
)

// New returns a store that uses pool. The pool stays the caller's: Close
// does not close it. In advisory mode every held lease keeps one of the
// pool's connections, and the notifier keeps one more (hijacked out of the
// pool), so size pool_max_conns for them.
func New(pool *pgxpool.Pool, opts Options) (*Store, error) {
	if pool == nil {
		return nil, errors.New("postgres: New: pool is nil")
	}
	return newStore(poolQuerier{pool}, opts)
}

// NewDB returns a store that uses db, a database/sql pool opened with pgx's
// stdlib driver (sql.Open("pgx", ...) after importing
// github.com/jackc/pgx/v5/stdlib, or stdlib.OpenDBFromPool). The db stays
// the caller's. Other drivers work for the lease-row mode, but the advisory
// mode then notices a broken session only when it renews, and Subscribe
// fails.
func NewDB(db *sql.DB, opts Options) (*Store, error) {
	if db == nil {
		return nil, errors.New("postgres: NewDB: db is nil")
	}
	return newStore(dbQuerier{db}, opts)
}

func newStore(q querier, opts Options) (*Store, error) {
	o, err := opts.resolved()
	if err != nil {
		return nil, err
	}
	n := objectNames(o)
	sum := sha256.Sum256([]byte(o.Schema + "\x00" + o.Table))
	s := &Store{
		q:         q,
		opts:      o,
		name:      "postgres",
		tableName: n.table,
		st:        buildStatements(n),
		channel:   "leasehold_" + hex.EncodeToString(sum[:8]),
		lockNS:    "leasehold\x00" + o.Schema + "\x00" + o.Table + "\x00",
		held:      make(map[*advLease]struct{}),
	}
	if o.Mode == Advisory {
		s.name = "postgres-advisory"
	}
	s.lis = newListener(s)
	return s, nil
}

// Mode reports the store's mode.
func (s *Store) Mode() Mode { return s.opts.Mode }

// Info reports the store's bounds. Tokens are safe fences: in lease-row mode
// they come from a counter in the key's row, in advisory mode from one
// sequence shared by all keys (so they have gaps); both are durable and
// never go back while the server keeps committed data (fsync on; with
// asynchronous replication a failover can lose the last commits, and with
// them the last tokens).
func (s *Store) Info() leasehold.Info {
	if s.opts.Mode == Advisory {
		// idle_session_timeout has millisecond granularity. The lock lives
		// in the acquiring session: grants are not portable.
		return leasehold.Info{Name: s.name, MinTTL: 10 * time.Millisecond, MaxTTL: leasehold.MaxTTL, SafeTokens: true}
	}
	// A lease row is renewed or released by owner and token from any process.
	return leasehold.Info{Name: s.name, MinTTL: time.Millisecond, MaxTTL: leasehold.MaxTTL, SafeTokens: true, PortableGrants: true}
}

// check reports the caller's context error, or ErrClosed.
func (s *Store) check(ctx context.Context, op string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	closed := s.closed
	s.mu.Unlock()
	if closed {
		return &leasehold.StoreError{Store: s.name, Op: op, Err: leasehold.ErrClosed}
	}
	return nil
}

// Acquire claims req.Key in one round trip (see the package documentation
// for the statement of each mode).
func (s *Store) Acquire(ctx context.Context, req leasehold.AcquireRequest) (leasehold.Grant, error) {
	if err := leasehold.ValidateKey(req.Key); err != nil {
		return leasehold.Grant{}, err
	}
	if err := leasehold.ValidateTTL(req.TTL, s.Info()); err != nil {
		return leasehold.Grant{}, err
	}
	if req.Owner == "" {
		return leasehold.Grant{}, errors.New("postgres: acquire: owner is empty")
	}
	if err := s.check(ctx, "acquire"); err != nil {
		return leasehold.Grant{}, err
	}
	if s.opts.Mode == Advisory {
		return s.advAcquire(ctx, req)
	}
	return s.leaseAcquire(ctx, req)
}

// Renew extends g if its owner and token still hold the key. In lease-row
// mode a lease that expired but that nobody has taken since is renewed with
// its token unchanged; in advisory mode a lease whose session the server
// ended (its idle_session_timeout is the TTL) is gone.
func (s *Store) Renew(ctx context.Context, g leasehold.Grant) (leasehold.Grant, error) {
	if err := leasehold.ValidateTTL(g.TTL, s.Info()); err != nil {
		return leasehold.Grant{}, err
	}
	if err := s.check(ctx, "renew"); err != nil {
		return leasehold.Grant{}, err
	}
	if s.opts.Mode == Advisory {
		return s.advRenew(ctx, g)
	}
	return s.leaseRenew(ctx, g)
}

// Release ends g if its owner and token still hold the key, and wakes the
// waiters of the key (if any have subscribed) in the same statement.
func (s *Store) Release(ctx context.Context, g leasehold.Grant) error {
	if err := s.check(ctx, "release"); err != nil {
		return err
	}
	if s.opts.Mode == Advisory {
		return s.advRelease(ctx, g)
	}
	return s.leaseRelease(ctx, g)
}

// Holder reports who holds key now, by the server's clock.
func (s *Store) Holder(ctx context.Context, key string) (leasehold.Holder, error) {
	if err := s.check(ctx, "holder"); err != nil {
		return leasehold.Holder{}, err
	}
	if s.opts.Mode == Advisory {
		return s.advHolder(ctx, key)
	}
	return s.leaseHolder(ctx, key)
}

// List reports the current holders of keys starting with prefix, in key
// order. The advisory mode cannot list (the server knows only the hashes of
// the keys it locks): it returns an error wrapping errors.ErrUnsupported.
func (s *Store) List(ctx context.Context, prefix string) ([]leasehold.Holder, error) {
	if err := s.check(ctx, "list"); err != nil {
		return nil, err
	}
	if s.opts.Mode == Advisory {
		return nil, &leasehold.StoreError{Store: s.name, Op: "list", Err: errors.ErrUnsupported}
	}
	return s.leaseList(ctx, prefix)
}

// Close stops the notifier and, in advisory mode, ends the session of every
// lease still held (which releases its lock and closes its Grant.Lost). It
// closes the pool only if OpenURL made it. Later calls fail with ErrClosed.
func (s *Store) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	held := make([]*advLease, 0, len(s.held))
	for l := range s.held {
		held = append(held, l)
	}
	s.mu.Unlock()

	s.lis.close()
	for _, l := range held {
		l.abandon()
	}
	if s.ownPool != nil {
		s.ownPool.Close()
	}
	return nil
}

// forget removes an advisory lease from the held set.
func (s *Store) forget(l *advLease) {
	s.mu.Lock()
	delete(s.held, l)
	s.mu.Unlock()
}

// ttlMicros rounds ttl up to whole microseconds.
func ttlMicros(ttl time.Duration) int64 {
	return int64((ttl + time.Microsecond - 1) / time.Microsecond)
}

// ttlMillis rounds ttl up to whole milliseconds.
func ttlMillis(ttl time.Duration) int64 {
	return int64((ttl + time.Millisecond - 1) / time.Millisecond)
}
