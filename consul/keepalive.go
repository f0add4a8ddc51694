package consul

import (
	"context"
	"time"

	"github.com/hashicorp/consul/api"
	"github.com/leasehold-go/leasehold/internal/sessionpool"
)

// keepalive renews the Consul session every interval. Each renewal's send
// time anchors the invalidation lower bound (never the reply's arrival).
// When the lower bound passes without a successful renewal, or Consul
// answers that the session is gone, the session is lost.
func (ss *session) keepalive(t0 time.Time) {
	ss.KeepAlive(t0, ss.interval, ss.renewOnce, func() {
		ss.st.sessionVanished(ss.ctx, ss)
		ss.markLost() // Consul says the session is gone
	}, func() {
		// The session may still live if Consul took a renewal whose
		// reply we lost, or once the agent is reachable again:
		// destroy it so its entries do not outlive the grants.
		ss.markLost()
		ss.st.destroyLater(ss)
	})
}

// renewOnce renews the session, waiting up to an interval for the answer,
// which moves the invalidation lower bound to the request's send time plus
// the session's TTL.
func (ss *session) renewOnce() sessionpool.Outcome {
	ctx, cancel := context.WithTimeout(ss.ctx, ss.interval)
	defer cancel()
	sent := time.Now()
	entry, _, err := ss.st.cli.Session().Renew(ss.id, (&api.WriteOptions{}).WithContext(ctx))
	switch {
	case ss.ctx.Err() != nil:
		return sessionpool.KeepStopped
	case err != nil:
		return sessionpool.KeepFailed
	case entry == nil:
		return sessionpool.KeepGone
	}
	ss.Extend(sent.Add(ss.ttl))
	return sessionpool.KeepOK
}

// destroyLater destroys ss, a session presumed lost, retrying until Consul
// confirms, the session would have expired by itself (twice its TTL, Consul's
// grace, after its lower bound), or the store closes. Its entries are then
// released at once instead of at the session's expiry, once the agent
// answers again.
func (s *Store) destroyLater(ss *session) {
	s.sessions.WhileOpen(func() { s.destroyLaterLocked(ss) })
}

// destroyLaterLocked is destroyLater holding the pool's mutex, so that
// Close waits for its goroutine.
func (s *Store) destroyLaterLocked(ss *session) {
	end := ss.Expiry().Add(2 * ss.ttl)
	s.sessions.Go(func() {
		for time.Now().Before(end) {
			ctx, cancel := context.WithTimeout(s.sessions.Ctx(), destroyTimeout)
			_, err := s.cli.Session().Destroy(ss.id, (&api.WriteOptions{}).WithContext(ctx))
			cancel()
			if err == nil {
				return
			}
			select {
			case <-s.sessions.Ctx().Done():
				return
			case <-time.After(time.Second):
			}
		}
	})
}

// watchWait bounds one blocking query of the session watch.
const watchWait = 5 * time.Minute

// watch follows the session with blocking queries and marks it lost as soon
// as Consul no longer has it (its TTL ran out, it was destroyed, its node
// was deregistered), rather than at the next renewal. A missing session is
// confirmed by a consistent read first.
func (ss *session) watch() {
	var index uint64
	pause := 50 * time.Millisecond
	for ss.ctx.Err() == nil {
		q := &api.QueryOptions{WaitIndex: index, WaitTime: watchWait}
		entries, meta, err := ss.st.cli.Session().Info(ss.id, q.WithContext(ss.ctx))
		if err != nil {
			select {
			case <-ss.ctx.Done():
				return
			case <-time.After(pause):
			}
			pause = min(2*pause, time.Second)
			continue
		}
		pause = 50 * time.Millisecond
		if entries == nil && ss.confirmGone() {
			ss.st.sessionVanished(ss.ctx, ss) // a loss of the cluster's data?
			ss.markLost()
			return
		}
		index = nextIndex(index, meta.LastIndex)
	}
}

// confirmGone reports whether a consistent read agrees that the session
// does not exist.
func (ss *session) confirmGone() bool {
	q := &api.QueryOptions{RequireConsistent: true}
	ctx, cancel := context.WithTimeout(ss.ctx, ss.interval)
	defer cancel()
	entry, _, err := ss.st.cli.Session().Info(ss.id, q.WithContext(ctx))
	return err == nil && entry == nil
}

// nextIndex is the WaitIndex after a blocking query that was at prev and
// answered got: Consul's rules for an index that goes backwards (a snapshot
// restore, a leader change) or is zero.
func nextIndex(prev, got uint64) uint64 {
	switch {
	case got < prev:
		return 0
	case got == 0:
		return 1
	}
	return got
}
