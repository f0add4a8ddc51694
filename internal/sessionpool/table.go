package sessionpool

import "time"

// The table of a session's grants with their deadlines, the acquires in
// progress, and the orphans, under Mu. A grant is tracked under a key K (an
// entry's name, or a token) and matched by the store's match function,
// which checks its owner and token; match runs holding Mu.

// Track records a new grant g under k, made by a request sent at t0: its
// deadline is t0 plus the class. It returns the TTL the grant can count on
// (the class, or less if the session's known expiry is nearer; at least a
// millisecond), and false if the session is gone.
func (c *Core[K, G, O]) Track(k K, g G, t0 time.Time) (time.Duration, bool) {
	c.Mu.Lock()
	if c.gone {
		c.Mu.Unlock()
		return 0, false
	}
	c.grants[k] = &Entry[G]{Grant: g, deadline: t0.Add(c.cfg.Class)}
	c.lastUse = time.Now()
	ttl := max(c.ttlFromLocked(t0), time.Millisecond)
	c.Mu.Unlock()
	if c.cfg.PokeOnTrack {
		c.Poke() // housekeeping sets its timer for the new deadline
	}
	return ttl, true
}

// liveLocked returns the entry of the grant under k if the session is not
// gone and match accepts it. Caller holds Mu.
func (c *Core[K, G, O]) liveLocked(k K, match func(G) bool) *Entry[G] {
	e := c.grants[k]
	if c.gone || e == nil || !match(e.Grant) {
		return nil
	}
	return e
}

// Tracked returns the grant under k if the session keeps it, match accepts
// it and its deadline has not passed at now (a zero now: whatever its
// deadline).
func (c *Core[K, G, O]) Tracked(k K, match func(G) bool, now time.Time) (G, bool) {
	c.Mu.Lock()
	defer c.Mu.Unlock()
	e := c.liveLocked(k, match)
	if e == nil || now.After(e.deadline) {
		var zero G
		return zero, false
	}
	return e.Grant, true
}

// Kept returns the grant under k if the table holds it and match accepts
// it, whether or not its deadline has passed or the session is gone.
func (c *Core[K, G, O]) Kept(k K, match func(G) bool) (G, bool) {
	c.Mu.Lock()
	defer c.Mu.Unlock()
	if e := c.grants[k]; e != nil && match(e.Grant) {
		return e.Grant, true
	}
	var zero G
	return zero, false
}

// Remaining returns the time left before the deadline of the grant under k
// (0 if passed), if the table holds it and match accepts it.
func (c *Core[K, G, O]) Remaining(k K, match func(G) bool) (time.Duration, bool) {
	c.Mu.Lock()
	defer c.Mu.Unlock()
	if e := c.grants[k]; e != nil && match(e.Grant) {
		return max(time.Until(e.deadline), 0), true
	}
	return 0, false
}

// Renewed extends the deadline of the grant under k to t0 plus the class,
// after the server confirmed it by a request sent at t0, and returns the
// TTL it can count on. It reports false if the grant is no longer kept
// (released, swept, the session lost) or its deadline passed before t0.
func (c *Core[K, G, O]) Renewed(k K, match func(G) bool, t0 time.Time) (time.Duration, bool) {
	c.Mu.Lock()
	defer c.Mu.Unlock()
	e := c.liveLocked(k, match)
	if e == nil || t0.After(e.deadline) {
		return 0, false
	}
	if d := t0.Add(c.cfg.Class); d.After(e.deadline) {
		e.deadline = d
	}
	return c.ttlFromLocked(t0), true
}

// Untrack forgets the grant under k (released or refused) if the session
// keeps it and match accepts it; locked, if not nil, then runs holding Mu
// with the grant (the store frees what it kept for it).
func (c *Core[K, G, O]) Untrack(k K, match func(G) bool, locked func(G)) {
	c.Mu.Lock()
	if e := c.liveLocked(k, match); e != nil {
		delete(c.grants, k)
		if locked != nil {
			locked(e.Grant)
		}
		c.lastUse = time.Now()
	}
	idle := c.idleLocked()
	c.Mu.Unlock()
	c.pokeIf(idle)
}

// Take takes the grant under k out of the table for a release, if the
// session keeps it, match accepts it and its deadline has not passed, and
// marks k busy (housekeeping leaves it alone) until Settle.
func (c *Core[K, G, O]) Take(k K, match func(G) bool) (*Entry[G], bool) {
	c.Mu.Lock()
	defer c.Mu.Unlock()
	e := c.liveLocked(k, match)
	if e == nil || time.Now().After(e.deadline) {
		return nil, false
	}
	delete(c.grants, k)
	c.inflight[k]++
	return e, true
}

// Settle ends a release of e under k begun by Take. If the server answered,
// freed runs holding Mu (the grant is gone); if not, and the session is not
// gone, kept runs holding Mu and the grant is tracked again with its
// deadline, for a retried release or the sweep at its deadline.
func (c *Core[K, G, O]) Settle(k K, e *Entry[G], answered bool, freed, kept func(G)) {
	c.Mu.Lock()
	c.endLocked(k)
	c.lastUse = time.Now()
	if answered {
		freed(e.Grant)
	} else if !c.gone {
		kept(e.Grant)
		c.grants[k] = e
	}
	idle := c.idleLocked()
	c.Mu.Unlock()
	c.pokeIf(idle)
}

// HasGrantLocked reports whether a grant is tracked under k. Caller holds
// Mu.
func (c *Core[K, G, O]) HasGrantLocked(k K) bool { return c.grants[k] != nil }

// GrantLocked returns the grant tracked under k, if any. Caller holds Mu.
func (c *Core[K, G, O]) GrantLocked(k K) (G, bool) {
	if e := c.grants[k]; e != nil {
		return e.Grant, true
	}
	var zero G
	return zero, false
}

// Grants calls fn with each tracked grant, holding Mu, until fn reports
// false.
func (c *Core[K, G, O]) Grants(fn func(K, G) bool) {
	c.Mu.Lock()
	defer c.Mu.Unlock()
	for k, e := range c.grants {
		if !fn(k, e.Grant) {
			return
		}
	}
}

// Begin marks an acquire of k in progress (the sweep leaves k's orphans
// alone while it is); End ends the mark.
func (c *Core[K, G, O]) Begin(k K) {
	c.Mu.Lock()
	c.BeginLocked(k)
	c.Mu.Unlock()
}

// BeginLocked is Begin for a caller holding Mu.
func (c *Core[K, G, O]) BeginLocked(k K) { c.inflight[k]++ }

// End ends a mark made by Begin.
func (c *Core[K, G, O]) End(k K) {
	c.Mu.Lock()
	c.endLocked(k)
	c.Mu.Unlock()
}

// EndLocked is End for a caller holding Mu.
func (c *Core[K, G, O]) EndLocked(k K) { c.endLocked(k) }

func (c *Core[K, G, O]) endLocked(k K) {
	if c.inflight[k]--; c.inflight[k] <= 0 {
		delete(c.inflight, k)
	}
}

// Acquiring reports whether an acquire (or a release) of k is in progress.
func (c *Core[K, G, O]) Acquiring(k K) bool {
	c.Mu.Lock()
	defer c.Mu.Unlock()
	return c.inflight[k] > 0
}

// BusyLocked is Acquiring for a caller holding Mu.
func (c *Core[K, G, O]) BusyLocked(k K) bool { return c.inflight[k] > 0 }

// AddOrphan queues o for the sweep to clean up, unless the session is gone
// (its server state went with it).
func (c *Core[K, G, O]) AddOrphan(o O) {
	c.Mu.Lock()
	if !c.gone {
		c.orphans = append(c.orphans, o)
	}
	c.Mu.Unlock()
	if c.cfg.PokeOnOrphan {
		c.Poke()
	}
}

// Orphans returns how many orphans are queued.
func (c *Core[K, G, O]) Orphans() int {
	c.Mu.Lock()
	defer c.Mu.Unlock()
	return len(c.orphans)
}
