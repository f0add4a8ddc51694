package etcd

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/leasehold-go/leasehold"
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
	st    *Store
	class time.Duration // the TTL granted to leases of this class (whole seconds)

	// Set by start before ready closes; read-only after.
	id       clientv3.LeaseID
	leaseTTL time.Duration // the etcd lease's TTL as the server granted it
	interval time.Duration // keepalive period while healthy
	err      error         // why the lease was not granted
	ready    chan struct{} // closed once the etcd lease is granted (err nil) or not (err set)

	lost     chan struct{} // closed when the etcd lease is known or presumed gone; see Done
	lostOnce sync.Once
	stop     chan struct{} // closed to end the goroutines (teardown, loss, Close)
	stopOnce sync.Once
	kick     chan struct{} // wakes housekeeping early

	// mu guards the fields below. Code holding the sessions pool's mutex may
	// take it; code holding it never takes the pool's.
	mu       sync.Mutex
	expiry   time.Time            // lower bound of the etcd lease's expiry, by our monotonic clock
	grants   map[string]*grantRec // by entry name; see grants.go
	inflight map[string]int       // acquires in progress, by entry name
	slots    map[string][]ownerID // by leasehold key: each slot's owner, zero if free; see claim
	orphans  []orphan             // entries of ours to delete
	refs     int                  // acquires and waits in progress
	lastUse  time.Time
	gone     bool // lost, torn down or closed: takes no new references
	running  bool // goroutines started
}

// newSession returns a session of class, not yet started, with one
// reference (its creator's).
func newSession(s *Store, class time.Duration) *session {
	return &session{
		st:       s,
		class:    class,
		ready:    make(chan struct{}),
		lost:     make(chan struct{}),
		stop:     make(chan struct{}),
		kick:     make(chan struct{}, 1),
		grants:   make(map[string]*grantRec),
		inflight: make(map[string]int),
		slots:    make(map[string][]ownerID),
		refs:     1,
	}
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
// closes ready. On failure it records err, retires the session, and starts
// nothing.
func (ss *session) SetUp(ctx context.Context) {
	s := ss.st
	defer close(ss.ready)
	t0 := time.Now()
	want := leaseSeconds(int64(ss.class / time.Second))
	resp, err := s.cli.Grant(clientv3.WithRequireLeader(ctx), want)
	if err == nil && resp.Error != "" {
		err = errors.New(resp.Error)
	}
	if err == nil {
		err = checkGrant(resp.ID, resp.TTL, want)
	}
	if err != nil {
		ss.err = s.storeErrOn(ctx, "grant session lease", err)
		ss.retire()
		return
	}
	ss.id = resp.ID
	ss.leaseTTL = time.Duration(resp.TTL) * time.Second
	ss.interval = (ss.leaseTTL - ss.class) / 2
	if !s.launch(ss, t0) {
		ss.err = s.closedErr("acquire")
		ss.retire()
		ss.close(context.Background()) // nothing is under it yet
	}
}

// Up returns ready, closed once SetUp has finished; UpErr says how.
func (ss *session) Up() <-chan struct{} { return ss.ready }

// UpErr reports why SetUp failed, or nil. It is read once Up is closed.
func (ss *session) UpErr() error { return ss.err }

// started records that the goroutines of a session whose etcd lease was
// granted by a request sent at t0 are starting.
func (ss *session) started(t0 time.Time) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	ss.expiry = t0.Add(ss.leaseTTL)
	ss.lastUse = time.Now()
	ss.running = true
}

// Done returns a channel that is closed when the session's etcd lease is
// known or presumed gone: every grant on it is lost. It is each grant's
// Grant.Lost. Close does not close it (the lease lives on for its TTL).
func (ss *session) Done() <-chan struct{} { return ss.lost }

// isLost reports whether the session has been lost.
func (ss *session) isLost() bool {
	select {
	case <-ss.lost:
		return true
	default:
		return false
	}
}

// markLost records that the session's etcd lease is gone: every grant on it
// is lost, Done closes, and the next acquire of the class starts a new
// session.
func (ss *session) markLost() {
	ss.lostOnce.Do(func() {
		ss.mu.Lock()
		ss.gone = true
		ss.grants = map[string]*grantRec{}
		ss.slots = map[string][]ownerID{}
		ss.orphans = nil
		ss.mu.Unlock()
		ss.st.sessions.Forget(ss.class, ss)
		close(ss.lost)
		ss.halt()
	})
}

// retire marks the session gone and removes it from the Store's sessions.
func (ss *session) retire() {
	ss.mu.Lock()
	ss.gone = true
	ss.mu.Unlock()
	ss.st.sessions.Forget(ss.class, ss)
}

// shut marks the session gone and ends its goroutines, for Store.Close
// (which has already removed it from the Store's sessions). It reports
// whether the caller should revoke the lease: it was granted, and no grant
// is under it.
func (ss *session) shut() (revoke bool) {
	ss.mu.Lock()
	revoke = ss.running && !ss.gone && len(ss.grants) == 0
	ss.gone = true
	ss.mu.Unlock()
	ss.halt()
	return revoke
}

// halt ends the session's goroutines.
func (ss *session) halt() { ss.stopOnce.Do(func() { close(ss.stop) }) }

// revokeTimeout bounds the wait for the revocation of a session's lease.
const revokeTimeout = 2 * time.Second

// close ends the session's goroutines and revokes its etcd lease, which
// deletes every key under it (best effort, within revokeTimeout of ctx).
func (ss *session) close(ctx context.Context) {
	ss.halt()
	ctx, cancel := context.WithTimeout(ctx, revokeTimeout)
	defer cancel()
	_, _ = ss.st.cli.Revoke(ctx, ss.id)
}

// poke wakes the housekeeping goroutine.
func (ss *session) poke() {
	select {
	case ss.kick <- struct{}{}:
	default:
	}
}

// ttlFrom returns the TTL a grant acquired or renewed by a request sent at t0
// can count on: the class, or less if the etcd lease's known expiry is
// nearer (keepalives failing). Caller holds ss.mu.
func (ss *session) ttlFrom(t0 time.Time) time.Duration {
	if rem := ss.expiry.Sub(t0); rem < ss.class {
		return rem
	}
	return ss.class
}

// extend moves the lease's expiry lower bound to sent plus ttl seconds, the
// answer to a keepalive sent at sent, if that is later.
func (ss *session) extend(sent time.Time, ttl int64) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	// A TTL above the lease's own (or out of range) counts for no more.
	if exp := sent.Add(min(leaseTTL(ttl), ss.leaseTTL)); exp.After(ss.expiry) {
		ss.expiry = exp
	}
}

// covers reports whether the lease's known expiry is at least a class's TTL
// after t0: a grant made or renewed by a request sent at t0 can count on it.
func (ss *session) covers(t0 time.Time) bool {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return ss.ttlFrom(t0) >= ss.class
}

// expiredAt reports whether the lease's expiry lower bound has passed at now.
func (ss *session) expiredAt(now time.Time) bool {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return !now.Before(ss.expiry)
}

// fresh returns the send time t0 for a request of op on the session, first
// refreshing the etcd lease with one keepalive if its known expiry is less
// than a class's TTL after t0 (keepalives late or failing), so that a grant
// made or renewed by a request sent at t0 can count on the class's TTL.
func (ss *session) fresh(ctx context.Context, op string) (time.Time, error) {
	s := ss.st
	t0 := time.Now()
	if ss.covers(t0) {
		return t0, nil
	}
	resp, err := s.cli.KeepAliveOnce(clientv3.WithRequireLeader(ctx), ss.id)
	if err != nil {
		if isLeaseNotFound(err) {
			ss.markLost()
			return t0, &leasehold.StoreError{Store: Name, Op: op, Err: ErrSessionLost}
		}
		return t0, s.storeErrOn(ctx, op, fmt.Errorf("%w: %w", errKeepaliveOverdue, err))
	}
	ss.extend(t0, resp.TTL)
	if !ss.covers(t0) {
		return t0, &leasehold.StoreError{Store: Name, Op: op, Err: errKeepaliveOverdue}
	}
	return t0, nil
}
