package etcd

import (
	"cmp"
	"time"

	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/internal/sessionpool"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// Options configure a Store. The zero value is the documented default.
type Options struct {
	// Prefix is the etcd key prefix under which the store keeps its keys;
	// "" means DefaultPrefix ("leasehold/"). Stores that must see each
	// other's leases use the same prefix.
	Prefix string
	// IdleTimeout is how long a session (the etcd lease of one TTL class)
	// with no grants or waiters is kept before it is revoked. 0 means 30 s;
	// a negative value revokes it as soon as it is idle (each acquire after
	// an idle spell then costs one more round trip, to grant a new lease).
	IdleTimeout time.Duration
}

// DefaultIdleTimeout is the IdleTimeout used when Options.IdleTimeout is 0.
const DefaultIdleTimeout = 30 * time.Second

// Store is a leasehold.Store on etcd. It also implements leasehold.Notifier,
// leasehold.Watcher, leasehold.Waiter, leasehold.BatchRenewer and
// leasehold.Lister. Create it
// with New or OpenURL; it is safe for concurrent use.
type Store struct {
	cli       *clientv3.Client
	ownClient bool
	prefix    string
	idle      time.Duration

	sessions *sessionpool.Pool[*session] // by TTL class; also the closed flag, background context and goroutines
}

var (
	_ leasehold.Store        = (*Store)(nil)
	_ leasehold.Notifier     = (*Store)(nil)
	_ leasehold.Watcher      = (*Store)(nil)
	_ leasehold.Waiter       = (*Store)(nil)
	_ leasehold.BatchRenewer = (*Store)(nil)
	_ leasehold.Lister       = (*Store)(nil)
)

// New returns a Store on cli, the caller's etcd client. Close does not close
// cli. opts may be nil.
func New(cli *clientv3.Client, opts *Options) *Store {
	var o Options
	if opts != nil {
		o = *opts
	}
	s := &Store{cli: cli, prefix: cmp.Or(o.Prefix, DefaultPrefix), idle: cmp.Or(o.IdleTimeout, DefaultIdleTimeout)}
	s.sessions = sessionpool.New(func(class time.Duration) *session { return newSession(s, class) }, s.closedErr)
	return s
}

// TokenCaveat is the assumption behind the store's tokens, reported in Info.
const TokenCaveat = "tokens are etcd create revisions, which only grow across release, expiry, restart and leader failover, " +
	"but go back when the cluster is restored from a snapshot without --bump-revision: the restored cluster's revision " +
	"restarts at the snapshot's, so grants made after the restore can get tokens at or below ones handed out before it; " +
	"restore with `etcdutl snapshot restore --bump-revision N --mark-compacted`, N above the revisions written since the snapshot"

// Info reports the store's bounds. TTLs are rounded up to whole seconds
// (etcd leases have second granularity), so MinTTL is one second.
func (s *Store) Info() leasehold.Info {
	// A grant is renewed from another process through its key's
	// etcd lease (renewForeign).
	return leasehold.Info{Name: Name, MinTTL: time.Second, MaxTTL: leasehold.MaxTTL, SafeTokens: true, TokenCaveat: TokenCaveat, PortableGrants: true}
}

// Client returns the etcd client the store uses.
func (s *Store) Client() *clientv3.Client { return s.cli }

// KeyOf returns the etcd key of grant g's entry (while g holds its key, the
// entry's CreateRevision is g's token), as the Store that made g recorded
// it in g.Private; "" for a grant that does not say (one rebuilt from its
// key, owner and token).
func (s *Store) KeyOf(g leasehold.Grant) string { return nameOf(s.prefix, g) }

func (s *Store) closedErr(op string) error {
	return &leasehold.StoreError{Store: Name, Op: op, Err: leasehold.ErrClosed}
}

// Close stops the store's sessions: their keepalives end, so their grants
// expire by their etcd lease's TTL (Close does not release leases). Sessions
// with no grants are revoked at once. Close does not close a client passed
// to New; it closes the one OpenURL made.
func (s *Store) Close() error {
	if s.sessions.Shut((*session).shut) && s.ownClient {
		return s.cli.Close()
	}
	return nil
}
