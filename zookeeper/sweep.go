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
	t := time.NewTimer(time.Hour)
	defer t.Stop()
	for {
		next, idle := ss.sweep(time.Now())
		if idle {
			ss.st.sessions.Forget(ss.class, ss)
			ss.closeSession()
			return
		}
		t.Reset(time.Until(next))
		select {
		case <-ss.stop:
			return
		case <-ss.kick:
		case <-t.C:
		}
	}
}

// sweep does one round of housekeeping at now. It returns when the next
// round is due, or idle when the session has been idle long enough and is
// now gone (the caller closes it).
func (ss *session) sweep(now time.Time) (next time.Time, idle bool) {
	ss.mu.Lock()
	for tok, g := range ss.grants {
		if !now.Before(g.deadline) {
			delete(ss.grants, tok)
			ss.orphans = append(ss.orphans, orphan{path: g.path})
		}
	}
	work := ss.orphans
	ss.orphans = nil
	ss.mu.Unlock()

	var failed []orphan
	for _, o := range work {
		if err := ss.deleteOrphan(o); err != nil {
			failed = append(failed, o)
		}
	}

	ss.mu.Lock()
	defer ss.mu.Unlock()
	ss.orphans = append(ss.orphans, failed...)
	next = now.Add(ss.st.idleCheck())
	for _, g := range ss.grants {
		if g.deadline.Before(next) {
			next = g.deadline
		}
	}
	if r := now.Add(orphanRetry); len(ss.orphans) > 0 && r.Before(next) {
		next = r
	}
	quiet := ss.refs == 0 && len(ss.grants) == 0 && len(ss.orphans) == 0
	if quiet && !ss.gone && (ss.st.idle < 0 || now.Sub(ss.lastUse) >= ss.st.idle) {
		ss.gone = true
		return next, true
	}
	if at := ss.lastUse.Add(ss.st.idle); quiet && ss.st.idle > 0 && at.Before(next) {
		next = at
	}
	return next, false
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
	if ss.isLost() {
		return nil // the session's nodes went with it
	}
	ctx, cancel := context.WithTimeout(ss.st.ctx, 5*time.Second)
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
