package consul

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/consul/api"
	"github.com/leasehold-go/leasehold"
)

// A session is one Consul session shared by every grant of one TTL class on
// one Store, renewed by one goroutine. Grants are KV entries locked with the
// session, so holding 10,000 leases of one TTL costs one session renewal per
// period, not 10,000. As with etcd's concurrency.Session, the session owns
// the Consul session and its renewals, and Done reports its end; grants
// borrow it.
//
// The Consul session's TTL is longer than the class's TTL (see sessionTTL)
// and renewed often enough that, while renewals succeed, it outlives every
// grant's TTL. Each grant's own TTL is enforced by the housekeeping
// goroutine (sweep.go): a grant not renewed within its TTL is unlocked
// (index-checked), as if a per-key lease had expired.
type session struct {
	st        *Store
	class     time.Duration // the TTL of grants of this class (whole seconds)
	ttl       time.Duration // the Consul session's TTL
	lockDelay time.Duration // the Consul session's lock-delay
	interval  time.Duration // renewal period while healthy

	// Set by start before ready closes; read-only after.
	id    string        // the Consul session's ID
	err   error         // why the session was not created
	ready chan struct{} // closed once the session is created (err nil) or not (err set)

	ctx      context.Context // ends with halt (or the Store's Close); the goroutines' calls use it
	cancel   context.CancelFunc
	lost     chan struct{} // closed when the session is known or presumed gone; see Done
	lostOnce sync.Once
	lostErr  error         // why, if known; set before lost closes
	stop     chan struct{} // closed to end the goroutines (teardown, loss, Close)
	stopOnce sync.Once
	kick     chan struct{} // wakes housekeeping early

	// mu guards the fields below. Code holding the sessions pool's mutex may
	// take it; code holding it never takes the pool's.
	mu       sync.Mutex
	expiry   time.Time            // lower bound of the session's invalidation, by our monotonic clock
	grants   map[string]*grantRec // by KV key; see grants.go
	inflight map[string]int       // acquires in progress, by KV key
	orphans  []orphan             // entries of ours to unlock
	refs     int                  // acquires in progress
	lastUse  time.Time
	gone     bool // lost, torn down or closed: takes no new references
	running  bool // goroutines started
}

// newSession returns a session of class, not yet started, with one
// reference (its creator's).
func newSession(s *Store, class time.Duration) *session {
	ctx, cancel := context.WithCancel(s.ctx)
	ttl := sessionTTL(class)
	return &session{
		st:        s,
		class:     class,
		ttl:       ttl,
		lockDelay: min(class, MaxLockDelay),
		interval:  (ttl - class) / 2,
		ctx:       ctx,
		cancel:    cancel,
		ready:     make(chan struct{}),
		lost:      make(chan struct{}),
		stop:      make(chan struct{}),
		kick:      make(chan struct{}, 1),
		grants:    make(map[string]*grantRec),
		inflight:  make(map[string]int),
		refs:      1,
	}
}

// sessionTTL returns the Consul session TTL for a class: half as long again
// (at least one second more, at least MinSessionTTL), so that renewals every
// (TTL - class)/2 keep the session at least a class's TTL ahead of any grant.
func sessionTTL(class time.Duration) time.Duration {
	c := int64(class / time.Second)
	s := max((3*c+1)/2, c+1)
	return max(time.Duration(s)*time.Second, MinSessionTTL)
}

// classOf rounds ttl up to whole seconds.
func classOf(ttl time.Duration) time.Duration {
	return (ttl + time.Second - 1) / time.Second * time.Second
}

// SetUp creates the Consul session and starts the goroutines, then closes
// ready. On failure it records err, retires the session, and starts
// nothing.
//
// The session has no health checks (NodeChecks empty: the agent's serfHealth
// check, Consul's default, would invalidate it whenever the agent's node
// flaps, before any holder could know), behavior release, and a lock-delay
// of the class's TTL (at most Consul's 60 s): see the package doc.
func (ss *session) SetUp(ctx context.Context) {
	s := ss.st
	defer close(ss.ready)
	t0 := time.Now()
	entry := &api.SessionEntry{
		Name:      fmt.Sprintf("leasehold %s ttl=%s", s.prefix, ss.class),
		TTL:       ss.ttl.String(),
		Behavior:  api.SessionBehaviorRelease,
		LockDelay: ss.lockDelay,
	}
	id, err := ss.create(ctx, entry)
	if err != nil {
		ss.err = storeErr(ctx, "create session", "", err)
		ss.retire()
		return
	}
	ss.id = id
	if !s.launch(ss, t0) {
		ss.err = s.closedErr("acquire")
		ss.retire()
		ss.destroy(context.Background()) // nothing is under it yet
	}
}

// nodeWait bounds how long a session's creation waits for the agent's node
// to be registered in the catalog (an agent that has just started or joined
// registers it within seconds).
const nodeWait = 15 * time.Second

// create creates the Consul session, retrying while the agent's node is not
// yet in the catalog ("Missing node registration").
func (ss *session) create(ctx context.Context, entry *api.SessionEntry) (string, error) {
	end := time.Now().Add(nodeWait)
	pause := 50 * time.Millisecond
	for {
		id, _, err := ss.st.cli.Session().CreateNoChecks(entry, (&api.WriteOptions{}).WithContext(ctx))
		if err == nil || !strings.Contains(err.Error(), "Missing node registration") || time.Now().After(end) {
			return id, err
		}
		select {
		case <-ctx.Done():
			return "", ctx.Err()
		case <-time.After(pause):
		}
		pause = min(2*pause, time.Second)
	}
}

// Up returns ready, closed once SetUp has finished; UpErr says how.
func (ss *session) Up() <-chan struct{} { return ss.ready }

// UpErr reports why SetUp failed, or nil. It is read once Up is closed.
func (ss *session) UpErr() error { return ss.err }

// started records that the goroutines of a session created by a request
// sent at t0 are starting.
func (ss *session) started(t0 time.Time) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	ss.expiry = t0.Add(ss.ttl)
	ss.lastUse = time.Now()
	ss.running = true
}

// Done returns a channel that is closed when the session is known or
// presumed gone: every grant on it is lost. It is each grant's Grant.Lost.
// Close does not close it (the session lives on for its TTL).
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

// markLost records that the session is gone: every grant on it is lost,
// Done closes, and the next acquire of the class starts a new session.
func (ss *session) markLost() { ss.markLostBecause(nil) }

// markLostBecause is markLost saying why (for the refused renewals and
// LostReason).
func (ss *session) markLostBecause(why error) {
	ss.lostOnce.Do(func() {
		ss.lostErr = why
		ss.mu.Lock()
		ss.gone = true
		ss.grants = map[string]*grantRec{}
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
// whether the caller should destroy the session: it was created, and no
// grant is under it.
func (ss *session) shut() (destroy bool) {
	ss.mu.Lock()
	destroy = ss.running && !ss.gone && len(ss.grants) == 0
	ss.gone = true
	ss.mu.Unlock()
	ss.halt()
	return destroy
}

// halt ends the session's goroutines.
func (ss *session) halt() {
	ss.stopOnce.Do(func() {
		close(ss.stop)
		ss.cancel()
	})
}

// destroyTimeout bounds the wait for the destruction of a session.
const destroyTimeout = 2 * time.Second

// destroy ends the session's goroutines and destroys the Consul session,
// which releases every entry it holds (best effort, within destroyTimeout
// of ctx). It reports whether Consul confirmed.
func (ss *session) destroy(ctx context.Context) bool {
	ss.halt()
	ctx, cancel := context.WithTimeout(ctx, destroyTimeout)
	defer cancel()
	_, err := ss.st.cli.Session().Destroy(ss.id, (&api.WriteOptions{}).WithContext(ctx))
	return err == nil
}

// poke wakes the housekeeping goroutine.
func (ss *session) poke() {
	select {
	case ss.kick <- struct{}{}:
	default:
	}
}

// ttlFrom returns the TTL a grant acquired or renewed by a request sent at t0
// can count on: the class, or less if the session's known invalidation
// bound is nearer (renewals failing). Caller holds ss.mu.
func (ss *session) ttlFrom(t0 time.Time) time.Duration {
	if rem := ss.expiry.Sub(t0); rem < ss.class {
		return rem
	}
	return ss.class
}

// extend moves the session's invalidation lower bound to sent + its TTL,
// the answer to a renewal sent at sent, if that is later.
func (ss *session) extend(sent time.Time) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if exp := sent.Add(ss.ttl); exp.After(ss.expiry) {
		ss.expiry = exp
	}
}

// covers reports whether the session's known invalidation bound is at least
// a class's TTL after t0: a grant made or renewed by a request sent at t0
// can count on it.
func (ss *session) covers(t0 time.Time) bool {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return ss.ttlFrom(t0) >= ss.class
}

// expiredAt reports whether the session's invalidation lower bound has
// passed at now.
func (ss *session) expiredAt(now time.Time) bool {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return !now.Before(ss.expiry)
}

// fresh returns the send time t0 for a request of op on the session, first
// renewing the Consul session once if its known invalidation bound is less
// than a class's TTL after t0 (renewals late or failing), so that a grant
// made or renewed by a request sent at t0 can count on the class's TTL.
func (ss *session) fresh(ctx context.Context, op, key string) (time.Time, error) {
	t0 := time.Now()
	if ss.covers(t0) {
		return t0, nil
	}
	entry, _, err := ss.st.cli.Session().Renew(ss.id, (&api.WriteOptions{}).WithContext(ctx))
	if err != nil {
		return t0, storeErr(ctx, op, key, fmt.Errorf("%w: %w", errRenewOverdue, err))
	}
	if entry == nil {
		ss.st.sessionVanished(ctx, ss)
		ss.markLost()
		return t0, &leasehold.StoreError{Store: Name, Op: op, Err: fmt.Errorf("key %q: %w", key, ErrSessionLost)}
	}
	ss.extend(t0)
	if !ss.covers(t0) {
		return t0, &leasehold.StoreError{Store: Name, Op: op, Err: fmt.Errorf("key %q: %w", key, errRenewOverdue)}
	}
	return t0, nil
}

// whyLost says why the session was lost, for a refused renewal.
func (ss *session) whyLost() string {
	if ss.lostErr != nil {
		return ss.lostErr.Error()
	}
	return "its Consul session was lost"
}
