package leasehold

import "context"

// A lease acquired with AcquireOptions.MinHold and released before
// holdUntil is kept: its context is cancelled with ErrReleased, but it stays
// on the client's scheduler, renewed as any held lease, until its evFree
// event at holdUntil halts it and frees the grant in the store. A kept
// lease that is lost (refused, or its deadline passed) ends as any lost
// lease does; Close frees the kept leases at once.

// keep, called by Release under c.mu, keeps l if its MinHold has not yet
// passed: it cancels l's context with ErrReleased, schedules its free at
// holdUntil and reports true. It reports false for a lease without a
// MinHold, past it, already ended, or when Close has begun (Close releases
// it). c.mu must be held.
func (c *Client) keep(l *Lease) bool {
	if l.holdUntil.IsZero() || l.halted || c.closed || !c.opts.Clock.Now().Before(l.holdUntil) {
		return false
	}
	l.kept = true
	l.end(ErrReleased)
	l.fr = &event{kind: evFree, l: l}
	c.at(l.fr, l.holdUntil)
	return true
}

// free ends the hold of a kept lease whose MinHold has passed: it halts it
// and frees the grant in the background, reported as its EventRelease.
// c.mu must be held.
func (c *Client) free(l *Lease) {
	if !l.kept || l.halted {
		return
	}
	c.halt(l)
	c.bg.Go(func() { _ = l.releaseObserved(l.Context()) })
}

// dropHold frees a kept lease at once (Close), and returns the store's
// answer; it does nothing for a lease that is not kept.
func (l *Lease) dropHold() error {
	c := l.c
	c.mu.Lock()
	kept := l.kept && !l.halted
	if kept {
		c.halt(l)
	}
	c.mu.Unlock()
	if !kept {
		return nil
	}
	return l.releaseObserved(context.Background())
}
