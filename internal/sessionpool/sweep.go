package sessionpool

import (
	"context"
	"time"
)

// Housekeeping: a grant not renewed within its TTL becomes an orphan (the
// server's session outlives its grants, so the store ends them itself), the
// sweep cleans orphans up on the server, and an idle session is ended.

// expireLocked moves the grants past their deadline at now to the orphans
// and returns the orphans, which it takes out of the queue. With atDeadline
// a grant expires at its deadline, not after it, and its expiry does not
// count as a use of the session. Caller holds Mu.
func (c *Core[K, G, O]) expireLocked(now time.Time, atDeadline bool) []O {
	for k, e := range c.grants {
		if now.After(e.deadline) || atDeadline && now.Equal(e.deadline) {
			delete(c.grants, k)
			c.orphans = append(c.orphans, c.cfg.Orphan(k, e.Grant))
			if !atDeadline {
				c.lastUse = now
			}
		}
	}
	todo := c.orphans
	c.orphans = nil
	return todo
}

// Settler cleans up orphans on the server within ctx. It returns those it
// could not settle, to try again next round, and optionally a function
// run holding Mu once they are queued again (the store frees what it kept
// for the settled ones).
type Settler[O any] func(ctx context.Context, todo []O) (failed []O, locked func())

// Sweep is one round of the etcd and Consul stores' housekeeping: it moves
// the grants past their deadline to the orphans and settles the orphans
// with settle, within a sweep period (at least a second) of base. Those it
// could not settle are queued again unless the session is gone meanwhile.
func (c *Core[K, G, O]) Sweep(base context.Context, settle Settler[O]) {
	c.Mu.Lock()
	todo := c.expireLocked(time.Now(), false)
	c.Mu.Unlock()
	if len(todo) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(base, max(SweepPeriod(c.cfg.Class), time.Second))
	defer cancel()
	failed, locked := settle(ctx, todo)
	c.Mu.Lock()
	if !c.gone {
		c.orphans = append(c.orphans, failed...)
	}
	if locked != nil {
		locked()
	}
	c.Mu.Unlock()
}

// IdleOut ends the session if it has had no references, grants, orphans or
// acquires in progress for the store's idle timeout: it marks it gone,
// removes it from its Pool and reports true (the caller ends it on the
// server).
func (c *Core[K, G, O]) IdleOut() bool {
	idle := max(c.cfg.Idle, 0)
	c.Mu.Lock()
	if c.gone || c.refs > 0 || len(c.grants) > 0 || len(c.orphans) > 0 || len(c.inflight) > 0 || time.Since(c.lastUse) < idle {
		c.Mu.Unlock()
		return false
	}
	c.gone = true
	c.Mu.Unlock()
	c.cfg.Forget()
	return true
}

// Housekeep is the etcd and Consul sessions' housekeeping loop: every
// sweep period, or when poked, it runs sweep, then ends the session with
// end if IdleOut says it is idle, until Stop closes.
func (c *Core[K, G, O]) Housekeep(sweep, end func()) {
	Housekeep(c.stop, c.kick, SweepPeriod(c.cfg.Class), func() bool {
		sweep()
		if !c.IdleOut() {
			return false
		}
		end()
		return true
	})
}

// Plan is the bookkeeping of one round of the ZooKeeper store's
// housekeeping at now, which sleeps until the next deadline: it expires
// the grants at their deadline, settles the orphans with settle (those it
// returns are queued again) and returns when the next round is due: the
// nearest deadline, retry after now if orphans are left, the end of the
// idle timeout, or check after now. idle reports that the session has been
// idle long enough and is now gone (the caller removes it from its Pool and
// closes it).
func (c *Core[K, G, O]) Plan(now time.Time, settle func([]O) []O, check, retry time.Duration) (next time.Time, idle bool) {
	c.Mu.Lock()
	todo := c.expireLocked(now, true)
	c.Mu.Unlock()
	failed := settle(todo)

	c.Mu.Lock()
	defer c.Mu.Unlock()
	c.orphans = append(c.orphans, failed...)
	next = now.Add(check)
	for _, e := range c.grants {
		if e.deadline.Before(next) {
			next = e.deadline
		}
	}
	if r := now.Add(retry); len(c.orphans) > 0 && r.Before(next) {
		next = r
	}
	quiet := c.refs == 0 && len(c.grants) == 0 && len(c.orphans) == 0
	if quiet && !c.gone && (c.cfg.Idle < 0 || now.Sub(c.lastUse) >= c.cfg.Idle) {
		c.gone = true
		return next, true
	}
	if at := c.lastUse.Add(c.cfg.Idle); quiet && c.cfg.Idle > 0 && at.Before(next) {
		next = at
	}
	return next, false
}

// Rest is the ZooKeeper store's housekeeping loop: it runs round, which
// returns when the next round is due or that the session is done, until
// Stop closes, sleeping until then or until poked.
func (c *Core[K, G, O]) Rest(round func(now time.Time) (next time.Time, done bool)) {
	t := time.NewTimer(time.Hour)
	defer t.Stop()
	for {
		next, done := round(time.Now())
		if done {
			return
		}
		t.Reset(time.Until(next))
		select {
		case <-c.stop:
			return
		case <-c.kick:
		case <-t.C:
		}
	}
}
