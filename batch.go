package leasehold

import (
	"context"
	"time"
)

// batchGroup renews every lease a client holds with one TTL on a
// BatchRenewer store in one call per renew period, so holding many leases
// costs one round trip per period, not one per lease. Its event on the
// client's scheduler starts each batch; one batch is in flight at a time.
// Guarded by c.mu.
type batchGroup struct {
	ttl      time.Duration
	members  map[*Lease]struct{}
	ev       event
	failures int // consecutive failed batch calls
}

// idle reports whether g has no members: its event is off the heap, and a
// batch in flight schedules no other. c.mu must be held.
func (g *batchGroup) idle() bool { return len(g.members) == 0 }

// settleChunk bounds the batch results applied per hold of c.mu, so that a
// large batch does not hold the scheduler off for long.
const settleChunk = 256

// join adds l to its batch group, starting the group if needed. It reports
// whether l is renewed by a group. c.mu must be held.
func (c *Client) join(l *Lease) bool {
	if _, ok := c.store.(BatchRenewer); !ok {
		return false
	}
	g := c.groups[l.ttl]
	if g == nil {
		g = &batchGroup{ttl: l.ttl, members: make(map[*Lease]struct{})}
		g.ev = event{kind: evBatch, g: g}
		c.groups[l.ttl] = g
	}
	if g.idle() { // new, or idle since its last member left
		g.failures = 0
		c.renewIn(&g.ev, l.interval())
	}
	g.members[l] = struct{}{}
	l.group = g
	return true
}

// maxIdleGroups bounds the batch groups a client keeps after their last
// member left, so that a client acquiring and releasing in a loop reuses
// its group instead of making one per lease, and one using many TTLs does
// not keep a group per TTL.
const maxIdleGroups = 4

// leave removes l from its batch group and stops an empty group: its event
// leaves the heap, and a batch in flight schedules no other. The group
// stays for the next member with its TTL, unless maxIdleGroups others are
// idle already; the scheduler drops the idle ones when it goes idle itself.
// c.mu must be held.
func (c *Client) leave(l *Lease) {
	g := l.group
	if g == nil {
		return
	}
	delete(g.members, l)
	if !g.idle() {
		return
	}
	c.unschedule(&g.ev)
	if c.idleGroupCount() > maxIdleGroups {
		delete(c.groups, g.ttl)
	}
}

// idleGroupCount counts the batch groups without members. c.mu must be
// held.
func (c *Client) idleGroupCount() int {
	n := 0
	for _, g := range c.groups {
		if g.idle() {
			n++
		}
	}
	return n
}

// dropIdleGroups forgets the batch groups without members. c.mu must be
// held.
func (c *Client) dropIdleGroups() {
	for ttl, g := range c.groups {
		if g.idle() {
			delete(c.groups, ttl)
		}
	}
}

// groupInterval is the time between batches of g, before jitter.
func (c *Client) groupInterval(g *batchGroup) time.Duration {
	return time.Duration(float64(g.ttl) * c.opts.RenewFraction)
}

// renewBatch starts one batch of g's members on a goroutine. c.mu must be
// held.
func (c *Client) renewBatch(g *batchGroup) {
	interval := c.groupInterval(g)
	sent := c.opts.Clock.Now()
	ls := make([]*Lease, 0, len(g.members))
	gs := make([]Grant, 0, len(g.members))
	var earliest time.Time
	for l := range g.members {
		if !sent.Before(l.Deadline()) {
			continue // past its deadline (the scheduler ran late): its deadline event ends it
		}
		ls = append(ls, l)
		gs = append(gs, l.grant)
		if d := l.Deadline(); earliest.IsZero() || d.Before(earliest) {
			earliest = d
		}
	}
	if len(ls) == 0 {
		c.renewIn(&g.ev, interval)
		return
	}
	// Half the time left of the most urgent member, but never less than
	// half a period: a member close to its deadline retries on its own
	// and must not starve the whole batch of time.
	timeout := max(attemptTimeout(earliest.Sub(sent)), interval/2)
	go c.batchCall(g, ls, gs, sent, timeout)
}

// batchCall makes one RenewMany call and applies its results.
func (c *Client) batchCall(g *batchGroup, ls []*Lease, gs []Grant, sent time.Time, timeout time.Duration) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	res, err := c.store.(BatchRenewer).RenewMany(ctx, gs)
	cancel()
	took := c.opts.Clock.Now().Sub(sent)
	if err == nil && len(res) != len(ls) {
		err = &StoreError{Store: c.info.Name, Op: "renew", Err: errShortBatch}
	}
	for i := 0; i < len(ls); i += settleChunk {
		c.mu.Lock()
		for j := i; j < min(i+settleChunk, len(ls)); j++ {
			r := renewResult{sent: sent, took: took, err: err, wholeBatch: err != nil}
			if err == nil {
				r.err = res[j].Err
			}
			c.settle(ls[j], r)
		}
		c.mu.Unlock()
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if g.idle() {
		return
	}
	interval := c.groupInterval(g)
	if err != nil {
		g.failures++
		c.in(&g.ev, min(c.opts.Backoff.Delay(g.failures), interval/2))
	} else {
		g.failures = 0
		c.renewIn(&g.ev, interval)
	}
}
