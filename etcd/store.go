package etcd

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/leasehold-go/leasehold"
	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
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
// leasehold.Waiter, leasehold.BatchRenewer and leasehold.Lister. Create it
// with New or OpenURL; it is safe for concurrent use.
type Store struct {
	cli       *clientv3.Client
	ownClient bool
	prefix    string
	idle      time.Duration

	ctx    context.Context // ended by Close; background calls use it
	cancel context.CancelFunc
	wg     sync.WaitGroup // session goroutines

	mu       sync.Mutex
	sessions map[time.Duration]*session
	closed   bool
}

var (
	_ leasehold.Store        = (*Store)(nil)
	_ leasehold.Notifier     = (*Store)(nil)
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
	if o.Prefix == "" {
		o.Prefix = DefaultPrefix
	}
	if o.IdleTimeout == 0 {
		o.IdleTimeout = DefaultIdleTimeout
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Store{
		cli:      cli,
		prefix:   o.Prefix,
		idle:     o.IdleTimeout,
		ctx:      ctx,
		cancel:   cancel,
		sessions: make(map[time.Duration]*session),
	}
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

// EntryKey returns the etcd key of owner's entry in key's queue (see the
// package doc); while owner holds key, its CreateRevision is the token.
func (s *Store) EntryKey(key, owner string) string { return EntryKey(s.prefix, key, owner) }

// KeyOf returns the etcd key that holds grant g.
func (s *Store) KeyOf(g leasehold.Grant) string { return EntryKey(s.prefix, g.Key, g.Owner) }

func (s *Store) closedErr(op string) error {
	return &leasehold.StoreError{Store: Name, Op: op, Err: leasehold.ErrClosed}
}

// grantRef is a Grant's Private state: the session keeping the grant.
type grantRef struct {
	store *Store
	sess  *session
}

// errLeaseGone: the session's etcd lease vanished under an acquire.
var errLeaseGone = errors.New("session lease gone")

// Acquire claims req.Key in one transaction:
//
//	If(no entry in the key's queue)
//	Then(Put(<queue>/<id of owner>, {label}, session lease))
//	Else(Get(the queue's oldest entry))
//
// The token is the new entry's CreateRevision, a cluster-wide revision that
// only grows, also across leader failover. The first acquire of a TTL class
// also grants the class's session lease (one more round trip). When the key
// is held, the *HeldError carries the holder's label and token and a
// Remaining of 0: the holder's time left would take another round trip.
// Acquire never jumps the queue of AcquireWait callers.
func (s *Store) Acquire(ctx context.Context, req leasehold.AcquireRequest) (leasehold.Grant, error) {
	return s.onSession(ctx, req, s.acquireOn)
}

// onSession validates req and runs op on the session of req's TTL class,
// once more on a fresh session if the first one's etcd lease expired under
// it.
func (s *Store) onSession(ctx context.Context, req leasehold.AcquireRequest, op func(context.Context, *session, leasehold.AcquireRequest) (leasehold.Grant, error)) (leasehold.Grant, error) {
	if err := ctx.Err(); err != nil {
		return leasehold.Grant{}, err
	}
	if err := leasehold.ValidateKey(req.Key); err != nil {
		return leasehold.Grant{}, err
	}
	if err := leasehold.ValidateTTL(req.TTL, s.Info()); err != nil {
		return leasehold.Grant{}, err
	}
	class := classOf(req.TTL)
	for attempt := 0; ; attempt++ {
		ss, err := s.use(ctx, class)
		if err != nil {
			return leasehold.Grant{}, err
		}
		g, err := op(ctx, ss, req)
		s.unuse(ss)
		if errors.Is(err, errLeaseGone) {
			if attempt == 0 {
				continue // the session expired under us: one more try on a new one
			}
			err = &leasehold.StoreError{Store: Name, Op: "acquire", Err: ErrSessionLost}
		}
		return g, err
	}
}

func (s *Store) acquireOn(ctx context.Context, ss *session, req leasehold.AcquireRequest) (leasehold.Grant, error) {
	name := s.EntryKey(req.Key, req.Owner)
	qpfx := QueuePrefix(s.prefix, req.Key)
	t0, err := ss.fresh(ctx, "acquire")
	if err != nil {
		return leasehold.Grant{}, err
	}
	defer ss.begin(name)()

	resp, err := s.cli.Txn(clientv3.WithRequireLeader(ctx)).
		If(clientv3.Compare(clientv3.CreateRevision(qpfx), "=", 0).WithPrefix()).
		Then(clientv3.OpPut(name, encodeValue(req.Label), clientv3.WithLease(ss.id))).
		Else(clientv3.OpGet(qpfx, clientv3.WithFirstCreate()...)).
		Commit()
	if err != nil {
		return leasehold.Grant{}, s.acquireFailed(ctx, ss, name, err)
	}
	if !resp.Succeeded {
		return leasehold.Grant{}, heldError(req.Key, resp.Responses[0])
	}
	return s.granted(ss, req, name, resp.Header.Revision, t0)
}

// acquireFailed is the error of an acquire transaction that put name on
// ss's lease and got err instead of a reply.
func (s *Store) acquireFailed(ctx context.Context, ss *session, name string, err error) error {
	if isLeaseNotFound(err) {
		ss.markLost()
		return errLeaseGone
	}
	// The put may have been applied with its reply lost: have housekeeping
	// delete it if it turns out to be there and untracked.
	ss.addOrphan(orphan{name: name})
	return s.storeErrOn(ctx, "acquire", err)
}

// heldError describes the holder of key from a range of its queue's oldest
// entry.
func heldError(key string, r *pb.ResponseOp) *leasehold.HeldError {
	h := &leasehold.HeldError{Key: key}
	if kvs := r.GetResponseRange().GetKvs(); len(kvs) > 0 {
		h.Label = decodeLabel(kvs[0].Value)
		h.Token = uint64(kvs[0].CreateRevision)
	}
	return h
}

// granted records a grant won at revision rev by a request sent at t0.
func (s *Store) granted(ss *session, req leasehold.AcquireRequest, name string, rev int64, t0 time.Time) (leasehold.Grant, error) {
	ttl, ok := ss.track(name, rev, t0)
	if !ok {
		// The session was lost while the request was in flight: its lease
		// is gone or being revoked, and the key with it. No grant.
		s.deleteToken(name, rev)
		return leasehold.Grant{}, &leasehold.StoreError{Store: Name, Op: "acquire", Err: ErrSessionLost}
	}
	return leasehold.Grant{
		Key: req.Key, Owner: req.Owner, Label: req.Label,
		Token:   uint64(rev),
		TTL:     ttl,
		Lost:    ss.lost,
		Private: &grantRef{store: s, sess: ss},
	}, nil
}

// begin marks an acquire of name in progress (housekeeping leaves its key
// alone) and returns the function that ends the mark.
func (ss *session) begin(name string) func() {
	s := ss.st
	s.mu.Lock()
	ss.inflight[name]++
	s.mu.Unlock()
	return func() {
		s.mu.Lock()
		if ss.inflight[name]--; ss.inflight[name] <= 0 {
			delete(ss.inflight, name)
		}
		s.mu.Unlock()
	}
}

// addOrphan queues a key for housekeeping to delete.
func (ss *session) addOrphan(o orphan) {
	s := ss.st
	s.mu.Lock()
	if !ss.gone {
		ss.orphans = append(ss.orphans, o)
	}
	s.mu.Unlock()
}

// track records a new grant and returns its TTL; ok is false if the session
// is gone.
func (ss *session) track(name string, token int64, t0 time.Time) (time.Duration, bool) {
	s := ss.st
	s.mu.Lock()
	defer s.mu.Unlock()
	if ss.gone {
		return 0, false
	}
	ss.grants[name] = &grantRec{token: token, deadline: t0.Add(ss.class)}
	ss.lastUse = time.Now()
	return max(ss.ttlFrom(t0), time.Millisecond), true
}

// renewed extends a tracked grant's deadline after a successful renew sent
// at t0 and returns its TTL; ok is false if the grant is no longer tracked.
func (ss *session) renewed(name string, token int64, t0 time.Time) (time.Duration, bool) {
	s := ss.st
	s.mu.Lock()
	defer s.mu.Unlock()
	g := ss.grants[name]
	if ss.gone || g == nil || g.token != token || t0.After(g.deadline) {
		return 0, false
	}
	if d := t0.Add(ss.class); d.After(g.deadline) {
		g.deadline = d
	}
	return ss.ttlFrom(t0), true
}

// tracked reports whether the session still keeps the grant.
func (ss *session) tracked(name string, token int64) bool {
	s := ss.st
	s.mu.Lock()
	defer s.mu.Unlock()
	g := ss.grants[name]
	return !ss.gone && g != nil && g.token == token && !time.Now().After(g.deadline)
}

// untrack forgets a grant (released or refused).
func (ss *session) untrack(name string, token int64) {
	s := ss.st
	s.mu.Lock()
	if g := ss.grants[name]; g != nil && g.token == token {
		delete(ss.grants, name)
		ss.lastUse = time.Now()
	}
	idle := ss.refs == 0 && len(ss.grants) == 0
	s.mu.Unlock()
	if idle && s.idle < 0 {
		ss.poke()
	}
}

// deleteToken deletes name if its CreateRevision is token, on a short
// detached context (best effort).
func (s *Store) deleteToken(name string, token int64) {
	ctx, cancel := context.WithTimeout(s.ctx, 2*time.Second)
	defer cancel()
	_, _ = s.cli.Txn(ctx).
		If(clientv3.Compare(clientv3.CreateRevision(name), "=", token)).
		Then(clientv3.OpDelete(name)).Commit()
}

func notHeld(op, key, why string) error {
	if why != "" {
		return fmt.Errorf("%s %q: %s: %w", op, key, why, leasehold.ErrNotHeld)
	}
	return fmt.Errorf("%s %q: %w", op, key, leasehold.ErrNotHeld)
}

// ref returns g's session state if g was granted by this store.
func (s *Store) ref(g leasehold.Grant) *grantRef {
	if r, ok := g.Private.(*grantRef); ok && r.store == s {
		return r
	}
	return nil
}

// Renew checks in one transaction that g's entry still has g's token as its
// CreateRevision (the entry's name proves the owner). The etcd lease under
// the entry is the session's, kept alive by the session's keepalive
// stream; Renew extends the grant's own deadline, after which an unrenewed
// grant is deleted.
//
// A grant not made by this Store value (a handle since closed) is renewed by
// a keepalive of the etcd lease its entry is under, one more round trip.
func (s *Store) Renew(ctx context.Context, g leasehold.Grant) (leasehold.Grant, error) {
	if err := ctx.Err(); err != nil {
		return leasehold.Grant{}, err
	}
	if s.isClosed() {
		return leasehold.Grant{}, s.closedErr("renew")
	}
	if err := leasehold.ValidateKey(g.Key); err != nil {
		return leasehold.Grant{}, err
	}
	r := s.ref(g)
	if r == nil {
		return s.renewForeign(ctx, g)
	}
	ss := r.sess
	name := s.KeyOf(g)
	tok := int64(g.Token)
	if !ss.tracked(name, tok) {
		if ss.isLost() {
			return leasehold.Grant{}, notHeld("renew", g.Key, "session lease lost")
		}
		return leasehold.Grant{}, notHeld("renew", g.Key, "")
	}
	t0, err := ss.fresh(ctx, "renew")
	if err != nil {
		return leasehold.Grant{}, err
	}
	resp, err := s.cli.Txn(clientv3.WithRequireLeader(ctx)).
		If(clientv3.Compare(clientv3.CreateRevision(name), "=", tok)).
		Then(linearizable(name)).
		Commit()
	if err != nil {
		return leasehold.Grant{}, s.storeErrOn(ctx, "renew", err)
	}
	if !resp.Succeeded {
		ss.untrack(name, tok)
		return leasehold.Grant{}, notHeld("renew", g.Key, "")
	}
	ttl, ok := ss.renewed(name, tok, t0)
	if !ok {
		return leasehold.Grant{}, notHeld("renew", g.Key, "expired")
	}
	if ttl < ss.class {
		return leasehold.Grant{}, &leasehold.StoreError{Store: Name, Op: "renew", Err: errKeepaliveOverdue}
	}
	g.TTL = ttl
	return g, nil
}

// linearizable returns an op that makes a compare-only transaction a
// linearizable read. etcd serves a transaction without operations, or with
// serializable ranges only, from the local member's state without asking
// the leader, so such a compare may run on a member that has not yet
// applied the put that made the grant and refuse a grant made a moment
// before. A linearizable range (a count of name) in Then makes the member
// confirm with the leader that it has applied everything committed first.
func linearizable(name string) clientv3.Op {
	return clientv3.OpGet(name, clientv3.WithCountOnly())
}

// renewForeign renews a grant this Store value did not make.
func (s *Store) renewForeign(ctx context.Context, g leasehold.Grant) (leasehold.Grant, error) {
	name := s.KeyOf(g)
	resp, err := s.cli.Get(clientv3.WithRequireLeader(ctx), name)
	if err != nil {
		return leasehold.Grant{}, s.storeErrOn(ctx, "renew", err)
	}
	if len(resp.Kvs) == 0 || resp.Kvs[0].CreateRevision != int64(g.Token) || resp.Kvs[0].Lease == 0 {
		return leasehold.Grant{}, notHeld("renew", g.Key, "")
	}
	t0 := time.Now()
	ka, err := s.cli.KeepAliveOnce(clientv3.WithRequireLeader(ctx), clientv3.LeaseID(resp.Kvs[0].Lease))
	if err != nil {
		if isLeaseNotFound(err) {
			return leasehold.Grant{}, notHeld("renew", g.Key, "lease expired")
		}
		return leasehold.Grant{}, s.storeErrOn(ctx, "renew", err)
	}
	g.TTL = min(classOf(max(g.TTL, time.Second)), t0.Add(time.Duration(ka.TTL)*time.Second).Sub(time.Now()))
	if g.TTL <= 0 {
		return leasehold.Grant{}, notHeld("renew", g.Key, "lease expired")
	}
	return g, nil
}

// Release deletes g's entry in one transaction if its CreateRevision is still
// g's token:
//
//	If(CreateRevision(entry) == token) Then(Delete(entry))
//
// A stale holder therefore cannot delete a newer holder's key (etcd issue
// #22082, where a lone Mutex.Unlock could), nor can anyone without the
// owner id, which names the entry.
func (s *Store) Release(ctx context.Context, g leasehold.Grant) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if s.isClosed() {
		return s.closedErr("release")
	}
	if err := leasehold.ValidateKey(g.Key); err != nil {
		return err
	}
	name := s.KeyOf(g)
	tok := int64(g.Token)
	resp, err := s.cli.Txn(clientv3.WithRequireLeader(ctx)).
		If(clientv3.Compare(clientv3.CreateRevision(name), "=", tok)).
		Then(clientv3.OpDelete(name)).
		Commit()
	if err != nil {
		return s.storeErrOn(ctx, "release", err)
	}
	if r := s.ref(g); r != nil {
		r.sess.untrack(name, tok)
	}
	if !resp.Succeeded {
		return notHeld("release", g.Key, "")
	}
	return nil
}

// Holder reports the current holder of key. Remaining is the time left on
// the holder's etcd session lease (one more round trip), whole seconds; the
// holder's store deletes the key sooner if the holder stops renewing.
func (s *Store) Holder(ctx context.Context, key string) (leasehold.Holder, error) {
	if err := ctx.Err(); err != nil {
		return leasehold.Holder{}, err
	}
	if err := leasehold.ValidateKey(key); err != nil {
		return leasehold.Holder{}, err
	}
	if s.isClosed() {
		return leasehold.Holder{}, s.closedErr("holder")
	}
	resp, err := s.cli.Get(clientv3.WithRequireLeader(ctx), QueuePrefix(s.prefix, key), clientv3.WithFirstCreate()...)
	if err != nil {
		return leasehold.Holder{}, s.storeErrOn(ctx, "holder", err)
	}
	if len(resp.Kvs) == 0 {
		return leasehold.Holder{}, notHeld("holder", key, "")
	}
	kv := resp.Kvs[0]
	h := leasehold.Holder{Key: key, Label: decodeLabel(kv.Value), Token: uint64(kv.CreateRevision)}
	if kv.Lease != 0 {
		if ttl, err := s.cli.TimeToLive(ctx, clientv3.LeaseID(kv.Lease)); err == nil && ttl.TTL > 0 {
			h.Remaining = time.Duration(ttl.TTL) * time.Second
		}
	}
	return h, nil
}

func (s *Store) isClosed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed
}

// Close stops the store's sessions: their keepalives end, so their grants
// expire by their etcd lease's TTL (Close does not release leases). Sessions
// with no grants are revoked at once. Close does not close a client passed
// to New; it closes the one OpenURL made.
func (s *Store) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	var idle []*session
	for class, ss := range s.sessions {
		delete(s.sessions, class)
		if ss.started && !ss.gone && len(ss.grants) == 0 {
			idle = append(idle, ss)
		}
		ss.gone = true
		ss.halt()
	}
	s.mu.Unlock()

	if len(idle) > 0 {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		var wg sync.WaitGroup
		for _, ss := range idle {
			wg.Go(func() { _, _ = s.cli.Revoke(ctx, ss.id) })
		}
		wg.Wait()
		cancel()
	}
	s.cancel()
	s.wg.Wait()
	if s.ownClient {
		return s.cli.Close()
	}
	return nil
}
