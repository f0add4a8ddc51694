package leasehold

import (
	"context"
	"time"
)

// batchGroup renews every lease a client holds with one TTL on a
// BatchRenewer store in one call per renew period, so holding many leases
// costs one round trip per period, not one per lease.
type batchGroup struct {
	c       *Client
	ttl     time.Duration
	members map[*Lease]struct{} // guarded by c.mu
	stop    chan struct{}
}

// join adds l to its batch group, starting the group if needed. It reports
// whether l is renewed by a group. c.mu must be held.
func (c *Client) join(l *Lease) bool {
	if _, ok := c.store.(BatchRenewer); !ok {
		return false
	}
	g := c.groups[l.ttl]
	if g == nil {
		g = &batchGroup{c: c, ttl: l.ttl, members: make(map[*Lease]struct{}), stop: make(chan struct{})}
		c.groups[l.ttl] = g
		go g.run()
	}
	g.members[l] = struct{}{}
	return true
}

// leave removes l from its batch group and stops an empty group. c.mu must
// be held.
func (c *Client) leave(l *Lease) {
	g := c.groups[l.ttl]
	if g == nil {
		return
	}
	delete(g.members, l)
	if len(g.members) == 0 {
		close(g.stop)
		delete(c.groups, l.ttl)
	}
}

func (g *batchGroup) run() {
	o := &g.c.opts
	br := g.c.store.(BatchRenewer)
	interval := time.Duration(float64(g.ttl) * o.RenewFraction)
	delay := jitter(interval, renewJitter)
	failures := 0
	for {
		t := o.Clock.NewTimer(delay)
		select {
		case <-g.stop:
			t.Stop()
			return
		case <-t.C():
		}
		g.c.mu.Lock()
		ls := make([]*Lease, 0, len(g.members))
		gs := make([]Grant, 0, len(g.members))
		for l := range g.members {
			if l.ctx.Err() != nil {
				continue // ended, and leaving the group
			}
			ls = append(ls, l)
			gs = append(gs, l.grant)
		}
		g.c.mu.Unlock()
		if len(ls) == 0 {
			delay = jitter(interval, renewJitter)
			continue
		}
		sent := o.Clock.Now()
		earliest := ls[0].Deadline()
		for _, l := range ls[1:] {
			if d := l.Deadline(); d.Before(earliest) {
				earliest = d
			}
		}
		// Half the time left of the most urgent member, but never less than
		// half a period: a member close to its deadline retries on its own
		// and must not starve the whole batch of time.
		ctx, cancel := context.WithTimeout(context.Background(), max(attemptTimeout(earliest.Sub(sent)), interval/2))
		res, err := br.RenewMany(ctx, gs)
		cancel()
		if err == nil && len(res) != len(ls) {
			err = &StoreError{Store: g.c.info.Name, Op: "renew", Err: errShortBatch}
		}
		for i, l := range ls {
			r := renewResult{sent: sent, err: err, wholeBatch: err != nil}
			if err == nil {
				r.err = res[i].Err
			}
			l.deliver(r)
		}
		if err != nil {
			failures++
			delay = min(o.Backoff.Delay(failures), interval/2)
		} else {
			failures = 0
			delay = jitter(interval, renewJitter)
		}
	}
}
