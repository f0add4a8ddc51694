package zookeeper

import (
	"context"
	"errors"
	"time"

	"github.com/go-zookeeper/zk"
)

// Housekeeping: one goroutine per session deletes the grants not renewed
// within their TTL (ZooKeeper has no per-node TTL; the session outlives
// them), deletes orphans, and closes the session once it has been idle for
// the store's IdleTimeout.

// orphanRetry is the pause before housekeeping retries a failed delete.
const orphanRetry = 250 * time.Millisecond

func (ss *session) housekeep() {
	ss.Rest(func(now time.Time) (time.Time, bool) {
		next, idle := ss.sweep(now)
		if idle {
			ss.st.sessions.Forget(ss.class, ss)
			ss.closeSession()
		}
		return next, idle
	})
}

// sweep does one round of housekeeping at now. It returns when the next
// round is due, or idle when the session has been idle long enough and is
// now gone (the caller closes it).
func (ss *session) sweep(now time.Time) (next time.Time, idle bool) {
	return ss.Plan(now, func(todo []orphan) []orphan {
		var failed []orphan
		for _, o := range todo {
			if err := ss.deleteOrphan(o); err != nil {
				failed = append(failed, o)
			}
		}
		return failed
	}, ss.st.idleCheck(), orphanRetry)
}

// idleCheck is how often housekeeping looks when nothing is due.
func (s *Store) idleCheck() time.Duration {
	if s.idle > 0 {
		return s.idle
	}
	return time.Minute
}

// deleteOrphan deletes the node of o, or the nodes its attempt may have
// made in its parent.
func (ss *session) deleteOrphan(o orphan) error {
	if ss.IsLost() {
		return nil // the session's nodes went with it
	}
	ctx, cancel := context.WithTimeout(ss.st.sessions.Ctx(), 5*time.Second)
	defer cancel()
	if o.path != "" {
		err := ss.call(ctx, func() error { return ss.conn.Delete(o.path, -1) })
		if errors.Is(err, zk.ErrNoNode) {
			return nil
		}
		return err
	}
	found, err := ss.st.findOwn(ctx, ss, o.parent, o.id)
	if err != nil || found == "" {
		return err
	}
	err = ss.call(ctx, func() error { return ss.conn.Delete(found, -1) })
	if errors.Is(err, zk.ErrNoNode) {
		return nil
	}
	return err
}
