package consul

import "time"

// The session's grants, acquires in progress and orphans, under ss.mu.

// grantRec is a grant the session keeps alive.
type grantRec struct {
	tag      string // ownerTag of the grant's owner
	token    uint64
	index    uint64    // the entry's ModifyIndex after the lock
	value    []byte    // the entry's value, which an unlock writes back
	deadline time.Time // the grant expires here unless renewed
}

// orphan is an entry that may be locked by the session although no grant
// holds it: a grant that expired without renewal (token known), or the
// possible result of an acquire whose reply was lost (index 0: the entry is
// unlocked only if it holds the abandoned attempt's owner tag, and is looked
// for until the time until, in case the request lands late).
type orphan struct {
	name  string
	tag   string
	index uint64 // the entry's ModifyIndex while the expired grant held it
	value []byte // its value then
	until time.Time
}

// orphanWatch is how long an acquire whose reply was lost is looked for.
const orphanWatch = 10 * time.Second

// Hold takes a reference on the session for an acquire. It fails if the
// session is gone.
func (ss *session) Hold() bool {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if ss.gone {
		return false
	}
	ss.refs++
	return true
}

// Drop drops a reference taken by Hold (or newSession).
func (ss *session) Drop() {
	ss.mu.Lock()
	ss.refs--
	ss.lastUse = time.Now()
	idle := ss.refs == 0 && len(ss.grants) == 0
	ss.mu.Unlock()
	if idle && ss.st.idle < 0 {
		ss.poke()
	}
}

// begin marks an acquire of name in progress (housekeeping leaves its entry
// alone) and returns the function that ends the mark.
func (ss *session) begin(name string) func() {
	ss.mu.Lock()
	ss.inflight[name]++
	ss.mu.Unlock()
	return func() {
		ss.mu.Lock()
		if ss.inflight[name]--; ss.inflight[name] <= 0 {
			delete(ss.inflight, name)
		}
		ss.mu.Unlock()
	}
}

// addOrphan queues an entry for housekeeping to unlock, and wakes it.
func (ss *session) addOrphan(o orphan) {
	ss.mu.Lock()
	if !ss.gone {
		ss.orphans = append(ss.orphans, o)
	}
	ss.mu.Unlock()
	ss.poke()
}

// track records a new grant rec (its deadline not yet set) made by a request
// sent at t0 and returns its TTL; ok is false if the session is gone.
func (ss *session) track(name string, rec grantRec, t0 time.Time) (time.Duration, bool) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if ss.gone {
		return 0, false
	}
	rec.deadline = t0.Add(ss.class)
	ss.grants[name] = &rec
	ss.lastUse = time.Now()
	return max(ss.ttlFrom(t0), time.Millisecond), true
}

// renewed extends a tracked grant's deadline after a successful renew sent
// at t0 and returns its TTL; ok is false if the grant is no longer tracked.
func (ss *session) renewed(name, tag string, token uint64, t0 time.Time) (time.Duration, bool) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	g := ss.grants[name]
	if ss.gone || g == nil || g.token != token || g.tag != tag || t0.After(g.deadline) {
		return 0, false
	}
	if d := t0.Add(ss.class); d.After(g.deadline) {
		g.deadline = d
	}
	return ss.ttlFrom(t0), true
}

// tracked returns the session's record of the grant, and whether the
// session still keeps it (not lost, not past its deadline).
func (ss *session) tracked(name, tag string, token uint64) (grantRec, bool) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	g := ss.grants[name]
	if ss.gone || g == nil || g.token != token || g.tag != tag || time.Now().After(g.deadline) {
		return grantRec{}, false
	}
	return *g, true
}

// untrack forgets a grant (released or refused).
func (ss *session) untrack(name string, token uint64) {
	ss.mu.Lock()
	if g := ss.grants[name]; g != nil && g.token == token {
		delete(ss.grants, name)
		ss.lastUse = time.Now()
	}
	idle := ss.refs == 0 && len(ss.grants) == 0
	ss.mu.Unlock()
	if idle && ss.st.idle < 0 {
		ss.poke()
	}
}
