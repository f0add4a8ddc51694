package consul

import (
	"cmp"
	"net/http"
	"time"

	"github.com/hashicorp/consul/api"
	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/internal/sessionpool"
)

// Options configure a Store. The zero value is the documented default.
type Options struct {
	// Prefix is the Consul KV prefix under which the store keeps its keys;
	// "" means DefaultPrefix ("leasehold/"). Stores that must see each
	// other's leases use the same prefix.
	Prefix string
	// IdleTimeout is how long a session (the Consul session of one TTL
	// class) with no grants is kept before it is destroyed. 0 means 30 s; a
	// negative value destroys it as soon as it is idle (each acquire after
	// an idle spell then costs one more round trip, to create a session).
	IdleTimeout time.Duration
}

// DefaultIdleTimeout is the IdleTimeout used when Options.IdleTimeout is 0.
const DefaultIdleTimeout = 30 * time.Second

// Consul's bounds on a session's TTL (its servers' session_ttl_min default
// and its fixed maximum), and on its lock-delay.
const (
	MinSessionTTL = 10 * time.Second
	MaxSessionTTL = 24 * time.Hour
	MaxLockDelay  = 60 * time.Second
)

// MinTTL and MaxTTL are the TTLs the store accepts (Info). A TTL below
// MinSessionTTL is kept on a session of MinSessionTTL (see the package
// doc); MaxTTL is the longest TTL whose session (1.5 x TTL) Consul allows.
const (
	MinTTL = time.Second
	MaxTTL = MaxSessionTTL * 2 / 3
)

// Store is a leasehold.Store on Consul's KV store and sessions. It also
// implements leasehold.Notifier, leasehold.Watcher and leasehold.Lister.
// Create it with New or OpenURL; it is safe for concurrent use.
type Store struct {
	cli       *api.Client
	transport *http.Transport // OpenURL's, whose connections Close closes
	conns     *conns          // its dialer
	prefix    string
	idle      time.Duration
	clock     *serverClock // the agent's clock, from OpenURL's responses
	high      highWater    // the highest token granted or seen
	raft      raftWatch    // whether the agent is a -dev agent (OpenURL asks)

	sessions *sessionpool.Pool[*session] // by TTL class; also the closed flag, background context and goroutines
}

var (
	_ leasehold.Store    = (*Store)(nil)
	_ leasehold.Notifier = (*Store)(nil)
	_ leasehold.Watcher  = (*Store)(nil)
	_ leasehold.Lister   = (*Store)(nil)

	_ leasehold.LostExplainer = (*Store)(nil)
)

// New returns a Store on cli, the caller's Consul client (its agent address
// and ACL token). opts may be nil.
func New(cli *api.Client, opts *Options) *Store {
	var o Options
	if opts != nil {
		o = *opts
	}
	s := &Store{cli: cli, prefix: cmp.Or(o.Prefix, DefaultPrefix), idle: cmp.Or(o.IdleTimeout, DefaultIdleTimeout), clock: &serverClock{}}
	s.sessions = sessionpool.New(func(class time.Duration) *session { return newSession(s, class) }, s.closedErr)
	return s
}

// TokenCaveat is the assumption behind the store's tokens, reported in Info.
const TokenCaveat = "tokens are max(the entry's token + 1, the store's highest token + 1, the agent's clock in µs, from its Date headers), " +
	"written by the conditioned lock; if the cluster loses its data (a -dev agent restarted, every server's data folder wiped) " +
	"a token can repeat only for a grant within the same second of the agent's clock as the key's last grant before the loss, " +
	"or if the agent's clock was set back (a store made by New on the caller's client floors by the local clock instead)"

// DevCaveat is added to TokenCaveat, and SafeTokens is false, on a store
// whose agent said at open (OpenURL) that it is a -dev agent.
const DevCaveat = "this is a -dev agent, which keeps its entries, sessions and lock-delays in memory: a restart loses them all, " +
	"so another client can take a held key at once (before the holder's next renewal, which ends every lease of this store); " +
	"any session of this store that vanishes (destroyed by someone, expired, or lost in a restart) is taken for such a loss and ends every lease of this store, " +
	"in every TTL class (fails safe); run servers with a data folder; "

// Info reports the store's bounds: TTLs from 1 s (below Consul's 10 s
// session minimum, a grant is kept on a 10 s session: see the package doc)
// to 16 h (its session, 1.5 x the TTL, must fit Consul's 24 h maximum),
// rounded up to whole seconds. On a -dev agent (found by OpenURL),
// SafeTokens is false and TokenCaveat starts with DevCaveat. Both caveats
// are constants, so their concatenation is too: Info builds no string.
func (s *Store) Info() leasehold.Info {
	info := leasehold.Info{Name: Name, MinTTL: MinTTL, MaxTTL: MaxTTL, SafeTokens: true, TokenCaveat: TokenCaveat, PortableGrants: true}
	if s.raft.isDev() {
		info.SafeTokens, info.TokenCaveat = false, DevCaveat+TokenCaveat
	}
	return info
}

// Client returns the Consul client the store uses.
func (s *Store) Client() *api.Client { return s.cli }

// KeyOf returns the Consul KV key that holds key in this store.
func (s *Store) KeyOf(key string) string { return KeyName(s.prefix, key) }

func (s *Store) closedErr(op string) error {
	return &leasehold.StoreError{Store: Name, Op: op, Err: leasehold.ErrClosed}
}

// Close stops the store's sessions: their renewals end, so their grants end
// with the session's TTL (Close does not release leases). Sessions with no
// grants are destroyed at once.
func (s *Store) Close() error {
	if s.sessions.Shut((*session).shut) && s.transport != nil {
		s.conns.closeAll()
		s.transport.CloseIdleConnections()
	}
	return nil
}
