package etcd

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/internal/sessionpool"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// A session is one etcd lease shared by every grant and waiter of one TTL
// class on one Store, kept alive by one keepalive stream. Grants are keys
// put under the session's lease, so holding 10,000 leases of one TTL costs
// one keepalive per period, not 10,000. As with etcd's concurrency.Session,
// the session owns the lease and its keepalive, and Done reports its end;
// grants and waiters borrow it.
//
// The session's etcd lease is longer than the class's TTL (see leaseSeconds)
// and kept alive often enough that, while keepalives succeed, it outlives
// every grant's TTL. Each grant's own TTL is enforced by the housekeeping
// goroutine (sweep.go): a grant not renewed within its TTL is deleted
// (token-checked), as if a per-key lease had expired.
type session struct {
	// Core is the session's bookkeeping: references, up and lost state,
	// the lease's expiry lower bound, grants (by entry name) with their
	// deadlines, acquires in progress and orphans; see grants.go. Its Mu
	// also guards slots. Code holding the sessions pool's mutex may take
	// Mu; code holding Mu never takes the pool's.
	sessionpool.Core[string, *grantRec, orphan]

	st    *Store
	class time.Duration // the TTL granted to leases of this class (whole seconds)

	// Set by SetUp before Up closes; read-only after.
	id       clientv3.LeaseID
	leaseTTL time.Duration // the etcd lease's TTL as the server granted it
	interval time.Duration // keepalive period while healthy

	slots map[string][]ownerID // by leasehold key: each slot's owner, zero if free; see claim
}

// newSession returns a session of class, not yet started, with one
// reference (its creator's).
func newSession(s *Store, class time.Duration) *session {
	ss := &session{st: s, class: class, slots: make(map[string][]ownerID)}
	ss.Init(sessionpool.Config[string, *grantRec, orphan]{
		Class:  class,
		Idle:   s.idle,
		Forget: func() { s.sessions.Forget(class, ss) },
		Orphan: func(_ string, g *grantRec) orphan { return orphan{entry: g.entry, token: g.token} },
	})
	return ss
}

// leaseSeconds returns the etcd lease TTL for a class of c seconds: half as
// long again (at least one second more), so that keepalives every
// (lease-class)/2 keep the lease at least a class's TTL ahead of any grant.
func leaseSeconds(c int64) int64 {
	s := (3*c + 1) / 2
	if s < c+1 {
		s = c + 1
	}
	return s
}

// classOf rounds ttl up to whole seconds: etcd leases have second granularity.
func classOf(ttl time.Duration) time.Duration {
	return (ttl + time.Second - 1) / time.Second * time.Second
}

// SetUp grants the session's etcd lease and starts its goroutines, then
// closes Up's channel. On failure it records the error, retires the
// session, and starts nothing.
func (ss *session) SetUp(ctx context.Context) {
	s := ss.st
	t0 := time.Now()
	ss.SetUpWith(func() error { return ss.grant(ctx) },
		func() bool { return s.launch(ss, t0) },
		func() { ss.close(context.Background()) }, // nothing is under it yet
		func() error { return s.closedErr("acquire") })
}

// grant grants the session's etcd lease.
func (ss *session) grant(ctx context.Context) error {
	s := ss.st
	want := leaseSeconds(int64(ss.class / time.Second))
	resp, err := s.cli.Grant(clientv3.WithRequireLeader(ctx), want)
	if err == nil && resp.Error != "" {
		err = errors.New(resp.Error)
	}
	if err == nil {
		err = checkGrant(resp.ID, resp.TTL, want)
	}
	if err != nil {
		return s.storeErrOn(ctx, "grant session lease", err)
	}
	ss.id = resp.ID
	ss.leaseTTL = time.Duration(resp.TTL) * time.Second
	ss.interval = (ss.leaseTTL - ss.class) / 2
	return nil
}

// launch starts the goroutines of ss, whose etcd lease was granted by a
// request sent at t0, unless the store is closed. Holding the pool's mutex
// orders it with Close: either Close sees ss started, or launch sees the
// store closed.
func (s *Store) launch(ss *session, t0 time.Time) bool {
	return s.sessions.WhileOpen(func() {
		ss.Started(t0.Add(ss.leaseTTL))
		s.sessions.Go(func() { ss.keepalive(t0) })
		s.sessions.Go(ss.housekeep)
	})
}

// markLost records that the session's etcd lease is gone: every grant on it
// is lost, Done closes, and the next acquire of the class starts a new
// session.
func (ss *session) markLost() {
	ss.MarkLost(nil, func() { ss.slots = map[string][]ownerID{} })
}

// shut ends the session for Store.Close (which has already removed it from
// the Store's sessions), and revokes its lease if it was set up and no grant is under
// it.
func (ss *session) shut() {
	if started, holding := ss.Shut(); started && !holding {
		ss.close(context.Background())
	}
}

// revokeTimeout bounds the wait for the revocation of a session's lease.
const revokeTimeout = 2 * time.Second

// close ends the session's goroutines and revokes its etcd lease, which
// deletes every key under it (best effort, within revokeTimeout of ctx).
func (ss *session) close(ctx context.Context) {
	ss.Halt()
	ctx, cancel := context.WithTimeout(ctx, revokeTimeout)
	defer cancel()
	_, _ = ss.st.cli.Revoke(ctx, ss.id)
}

// extend moves the lease's expiry lower bound to sent plus ttl seconds, the
// answer to a keepalive sent at sent, if that is later.
func (ss *session) extend(sent time.Time, ttl int64) {
	// A TTL above the lease's own (or out of range) counts for no more.
	ss.Extend(sent.Add(min(leaseTTL(ttl), ss.leaseTTL)))
}

// fresh returns the send time t0 for a request of op on the session, first
// refreshing the etcd lease with one keepalive if its known expiry is less
// than a class's TTL after t0 (keepalives late or failing), so that a grant
// made or renewed by a request sent at t0 can count on the class's TTL.
func (ss *session) fresh(ctx context.Context, op string) (time.Time, error) {
	return ss.Fresh(func(t0 time.Time) error {
		resp, err := ss.st.cli.KeepAliveOnce(clientv3.WithRequireLeader(ctx), ss.id)
		if err != nil {
			if isLeaseNotFound(err) {
				ss.markLost()
				return &leasehold.StoreError{Store: Name, Op: op, Err: ErrSessionLost}
			}
			return ss.st.storeErrOn(ctx, op, fmt.Errorf("%w: %w", errKeepaliveOverdue, err))
		}
		ss.extend(t0, resp.TTL)
		return nil
	}, func() error { return &leasehold.StoreError{Store: Name, Op: op, Err: errKeepaliveOverdue} })
}
