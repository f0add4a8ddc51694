package zookeeper

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path"
	"strings"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/internal/bounded"
	"github.com/leasehold-go/leasehold/internal/sessionpool"
)

// Options configure a Store. The zero value is the documented default,
// except Servers, which must name at least one server.
type Options struct {
	// Servers are the ensemble's client addresses, host:port.
	Servers []string
	// Base is the node under which the store keeps its keys (the URL's
	// chroot); "" means DefaultBase ("/leasehold"). Missing nodes of the
	// path are created (persistent, with the store's ACL) on first use.
	// Stores that must see each other's leases use the same base.
	Base string
	// Auth is "user:password" for ZooKeeper's digest scheme; "" means no
	// authentication. With Auth, the nodes the store creates get the ACL
	// "auth" (all permissions to the authenticated user); without it,
	// "world:anyone".
	Auth string
	// IdleTimeout is how long the session of a TTL class with no grants or
	// waiters is kept before it is closed. 0 means 30 s; a negative value
	// closes it as soon as it is idle.
	IdleTimeout time.Duration
	// DialTimeout bounds New's probe and the establishment of each
	// session, when the caller's context does not end sooner. 0 means 5 s.
	DialTimeout time.Duration
	// Logger receives the ZooKeeper client's own log lines, at debug
	// level; nil means slog.Default() as it is when New is called.
	Logger *slog.Logger
}

// DefaultIdleTimeout is the IdleTimeout used when Options.IdleTimeout is 0.
const DefaultIdleTimeout = 30 * time.Second

// DefaultDialTimeout is the DialTimeout used when Options.DialTimeout is 0.
const DefaultDialTimeout = 5 * time.Second

// Store is a leasehold.Store on a ZooKeeper ensemble. It also implements
// leasehold.Waiter, leasehold.Notifier and leasehold.Watcher. Create it with
// New or OpenURL; it is safe for concurrent use.
type Store struct {
	servers []string
	base    string
	auth    []byte
	acl     []zk.ACL
	idle    time.Duration
	dial    time.Duration
	logger  *slog.Logger
	bounds  Bounds
	info    leasehold.Info

	baseMu sync.Mutex
	baseOK bool // the base path exists

	parents bounded.Map[int64] // the key nodes read as leasehold's, by creation zxid (parents.go)

	sessions *sessionpool.Pool[*session] // by TTL class; also the closed flag, background context and goroutines
}

var (
	_ leasehold.Store    = (*Store)(nil)
	_ leasehold.Waiter   = (*Store)(nil)
	_ leasehold.Notifier = (*Store)(nil)
	_ leasehold.Watcher  = (*Store)(nil)
)

// New returns a Store on the ensemble opts.Servers. It asks a server for the
// session timeouts the ensemble negotiates (see Bounds), which bound the
// TTLs the store accepts, and fails if no server answers within
// opts.DialTimeout (or ctx).
func New(ctx context.Context, opts Options) (*Store, error) {
	if len(opts.Servers) == 0 {
		return nil, &leasehold.StoreError{Store: Name, Op: "open", Err: errors.New("no servers")}
	}
	base, err := cleanBase(opts.Base)
	if err != nil {
		return nil, &leasehold.StoreError{Store: Name, Op: "open", Err: err}
	}
	s := &Store{
		servers: opts.Servers,
		base:    base,
		idle:    opts.IdleTimeout,
		dial:    opts.DialTimeout,
		logger:  opts.Logger,
		acl:     zk.WorldACL(zk.PermAll),
		parents: bounded.Map[int64]{Max: maxParents},
	}
	s.sessions = sessionpool.New(func(class time.Duration) *session { return newSession(s, class) }, s.closedErr)
	if opts.Auth != "" {
		s.auth = []byte(opts.Auth)
		s.acl = zk.AuthACL(zk.PermAll)
	}
	if s.idle == 0 {
		s.idle = DefaultIdleTimeout
	}
	if s.dial <= 0 {
		s.dial = DefaultDialTimeout
	}
	if s.logger == nil {
		s.logger = slog.Default()
	}
	pctx, cancel := context.WithTimeout(ctx, s.dial)
	defer cancel()
	b, err := probeBounds(pctx, s.servers)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, &leasehold.StoreError{Store: Name, Op: "open",
			Err: fmt.Errorf("no ZooKeeper server of %s answered within %s: %w", s.hosts(), s.dial, err)}
	}
	s.bounds = b
	s.info = infoFor(b)
	return s, nil
}

// cleanBase checks and cleans a base path.
func cleanBase(b string) (string, error) {
	if b == "" {
		return DefaultBase, nil
	}
	if !strings.HasPrefix(b, "/") {
		b = "/" + b
	}
	c := path.Clean(b)
	if c == "/" {
		return "", fmt.Errorf("base %q: the root cannot hold keys (name a node under it)", b)
	}
	if c == "/zookeeper" || strings.HasPrefix(c, "/zookeeper/") {
		return "", fmt.Errorf("base %q: /zookeeper is ZooKeeper's own", b)
	}
	return c, nil
}

// TokenCaveat is the assumption behind the store's tokens, reported in Info.
const TokenCaveat = "tokens are the creation zxids of the holders' nodes, which only grow across release, expiry, " +
	"restart and leader change (a new leader's epoch is the high 32 bits); they go back only if the ensemble's " +
	"data is wiped or restored from an older snapshot, or if the 32-bit counter of one epoch overflows, which " +
	"forces a new epoch first (ZooKeeper 3.8 elects again before it wraps)"

// infoFor returns the Info of a store whose ensemble negotiates b. A TTL
// class's session asks for twice the TTL (see doc.go), so a TTL must be at
// least the minimum session timeout (two ticks by default, which the
// margin argument needs) and at most half the maximum.
func infoFor(b Bounds) leasehold.Info {
	return leasehold.Info{
		Name:           Name,
		MinTTL:         b.MinSession,
		MaxTTL:         min(b.MaxSession/2, leasehold.MaxTTL),
		SafeTokens:     true,
		TokenCaveat:    TokenCaveat,
		PortableGrants: false, // a grant is an ephemeral node of this process's session
	}
}

// Info reports the store's bounds, derived from the ensemble's session
// bounds (see Bounds).
func (s *Store) Info() leasehold.Info { return s.info }

// Bounds returns the session timeouts the ensemble negotiates, as New
// found them.
func (s *Store) Bounds() Bounds { return s.bounds }

// Base returns the node under which the store keeps its keys.
func (s *Store) Base() string { return s.base }

// ParentOf returns the node whose children are key's queue.
func (s *Store) ParentOf(key string) string { return parentOf(s.base, key) }

func (s *Store) hosts() string { return strings.Join(s.servers, ",") }

func (s *Store) closedErr(op string) error {
	return &leasehold.StoreError{Store: Name, Op: op, Err: leasehold.ErrClosed}
}

// Close ends the store's sessions. A session with no grants is closed
// (ZooKeeper deletes its nodes at once); a session holding grants is
// abandoned without closing it, so its nodes, and the grants, end when the
// ensemble expires it, a session timeout (twice the TTL) later: Close does
// not release leases.
func (s *Store) Close() error {
	s.sessions.Shut((*session).shut)
	return nil
}
