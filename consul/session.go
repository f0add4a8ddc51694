package consul

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/hashicorp/consul/api"
	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/internal/sessionpool"
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
	// Core is the session's bookkeeping: references, up and lost state
	// (and why it was lost), the session's invalidation lower bound,
	// grants (by KV key) with their deadlines, acquires in progress and
	// orphans; see grants.go. Code holding the sessions pool's mutex may
	// take its Mu; code holding Mu never takes the pool's.
	sessionpool.Core[string, grantRec, orphan]

	st        *Store
	class     time.Duration // the TTL of grants of this class (whole seconds)
	ttl       time.Duration // the Consul session's TTL
	lockDelay time.Duration // the Consul session's lock-delay
	interval  time.Duration // renewal period while healthy

	id string // the Consul session's ID; set by SetUp before Up closes, read-only after

	ctx    context.Context // ends with Halt (or the Store's Close); the goroutines' calls use it
	cancel context.CancelFunc
}

// newSession returns a session of class, not yet started, with one
// reference (its creator's).
func newSession(s *Store, class time.Duration) *session {
	ctx, cancel := context.WithCancel(s.sessions.Ctx())
	ttl := sessionTTL(class)
	ss := &session{
		st:        s,
		class:     class,
		ttl:       ttl,
		lockDelay: min(class, MaxLockDelay),
		interval:  (ttl - class) / 2,
		ctx:       ctx,
		cancel:    cancel,
	}
	ss.Init(sessionpool.Config[string, grantRec, orphan]{
		Class:  class,
		Idle:   s.idle,
		Forget: func() { s.sessions.Forget(class, ss) },
		Orphan: func(name string, g grantRec) orphan {
			return orphan{name: name, tag: g.tag, index: g.index, value: g.value}
		},
		OnHalt:       cancel,
		PokeOnOrphan: true,
	})
	return ss
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
// Up's channel. On failure it records the error, retires the session, and
// starts nothing.
//
// The session has no health checks (NodeChecks empty: the agent's serfHealth
// check, Consul's default, would invalidate it whenever the agent's node
// flaps, before any holder could know), behavior release, and a lock-delay
// of the class's TTL (at most Consul's 60 s): see the package doc.
func (ss *session) SetUp(ctx context.Context) {
	s := ss.st
	t0 := time.Now()
	ss.SetUpWith(func() error {
		id, err := ss.create(ctx, &api.SessionEntry{
			Name:      fmt.Sprintf("leasehold %s ttl=%s", s.prefix, ss.class),
			TTL:       ss.ttl.String(),
			Behavior:  api.SessionBehaviorRelease,
			LockDelay: ss.lockDelay,
		})
		if err != nil {
			return storeErr(ctx, "create session", "", err)
		}
		ss.id = id
		return nil
	}, func() bool { return s.launch(ss, t0) },
		func() { ss.destroy(context.Background()) }, // nothing is under it yet
		func() error { return s.closedErr("acquire") })
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

// launch starts the goroutines of ss, whose Consul session was created by a
// request sent at t0, unless the store is closed. Holding the pool's mutex
// orders it with Close: either Close sees ss started, or launch sees the
// store closed.
func (s *Store) launch(ss *session, t0 time.Time) bool {
	return s.sessions.WhileOpen(func() {
		ss.Started(t0.Add(ss.ttl))
		s.sessions.Go(func() { ss.keepalive(t0) })
		s.sessions.Go(ss.housekeep)
		s.sessions.Go(ss.watch)
	})
}

// markLost records that the session is gone: every grant on it is lost,
// Done closes, and the next acquire of the class starts a new session.
func (ss *session) markLost() { ss.MarkLost(nil, nil) }

// markLostBecause is markLost saying why (for the refused renewals and
// LostReason).
func (ss *session) markLostBecause(why error) { ss.MarkLost(why, nil) }

// shut ends the session for Store.Close (which has already removed it from
// the Store's sessions), and destroys the Consul session if it was set up and no grant is under
// it.
func (ss *session) shut() {
	if started, holding := ss.Shut(); started && !holding {
		ss.destroy(context.Background())
	}
}

// destroyTimeout bounds the wait for the destruction of a session.
const destroyTimeout = 2 * time.Second

// destroy ends the session's goroutines and destroys the Consul session,
// which releases every entry it holds (best effort, within destroyTimeout
// of ctx). It reports whether Consul confirmed.
func (ss *session) destroy(ctx context.Context) bool {
	ss.Halt()
	ctx, cancel := context.WithTimeout(ctx, destroyTimeout)
	defer cancel()
	_, err := ss.st.cli.Session().Destroy(ss.id, (&api.WriteOptions{}).WithContext(ctx))
	return err == nil
}

// fresh returns the send time t0 for a request of op on the session, first
// renewing the Consul session once if its known invalidation bound is less
// than a class's TTL after t0 (renewals late or failing), so that a grant
// made or renewed by a request sent at t0 can count on the class's TTL.
func (ss *session) fresh(ctx context.Context, op, key string) (time.Time, error) {
	return ss.Fresh(func(t0 time.Time) error {
		entry, _, err := ss.st.cli.Session().Renew(ss.id, (&api.WriteOptions{}).WithContext(ctx))
		if err != nil {
			return storeErr(ctx, op, key, fmt.Errorf("%w: %w", errRenewOverdue, err))
		}
		if entry == nil {
			ss.st.sessionVanished(ctx, ss)
			ss.markLost()
			return &leasehold.StoreError{Store: Name, Op: op, Err: fmt.Errorf("key %q: %w", key, ErrSessionLost)}
		}
		ss.Extend(t0.Add(ss.ttl))
		return nil
	}, func() error {
		return &leasehold.StoreError{Store: Name, Op: op, Err: fmt.Errorf("key %q: %w", key, errRenewOverdue)}
	})
}

// whyLost says why the session was lost, for a refused renewal.
func (ss *session) whyLost() string {
	if err := ss.LostErr(); err != nil {
		return err.Error()
	}
	return "its Consul session was lost"
}
