package etcd

import "time"

// The session's entries (grants, acquires in progress, orphans) and the
// slots that name them, under ss.mu.

// grantRec is a grant the session keeps alive, and the grant's Private
// state: the session keeping it and its entry. Only token and deadline
// change, under ss.mu.
type grantRec struct {
	store *Store
	sess  *session
	entry
	token    int64
	deadline time.Time // the grant expires here unless renewed
}

// entry is a name in a key's queue that the session has claimed: slot slot
// of key, for the owner whose hash is owner (see claim).
type entry struct {
	key   string
	name  string
	slot  int
	owner ownerID
}

// orphan is an entry of ours that must be deleted: a grant that expired
// without renewal, a waiter's entry whose delete failed, or the possible
// result of an acquire whose reply was lost. Its slot stays claimed until
// it is settled.
type orphan struct {
	entry
	token int64 // delete only if the key's CreateRevision is token; 0: unknown, see deleteIfUntracked
}

// Hold takes a reference on the session for an acquire or a wait. It fails
// if the session is gone.
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

// claim takes the lowest free slot of key for an acquire by the owner with
// hash owner and marks the acquire in progress (housekeeping leaves its
// entry alone); the caller ends it with finish. It fails with errLeaseGone
// if the session is gone, and with dup set if the owner already holds or
// waits for key on this session.
func (ss *session) claim(key string, owner ownerID) (e entry, dup bool, err error) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if ss.gone {
		return entry{}, false, errLeaseGone
	}
	used := ss.slots[key]
	slot := len(used)
	for i, o := range used {
		if o == owner {
			return entry{}, true, nil
		}
		if o == (ownerID{}) && i < slot {
			slot = i
		}
	}
	if slot == len(used) {
		used = append(used, ownerID{})
	}
	used[slot] = owner
	ss.slots[key] = used
	e = entry{key: key, slot: slot, name: EntryKey(ss.st.prefix, key, ss.id, slot), owner: owner}
	ss.inflight[e.name]++
	return e, false, nil
}

// finish ends an acquire of e begun by claim. Unless keep (e became a
// grant or an orphan, which keep the slot), e's slot is free again.
func (ss *session) finish(e entry, keep bool) {
	ss.mu.Lock()
	if ss.inflight[e.name]--; ss.inflight[e.name] <= 0 {
		delete(ss.inflight, e.name)
	}
	if !keep {
		ss.free(e)
	}
	ss.mu.Unlock()
}

// free gives e's slot back, if e still has it and no grant of its name is
// tracked. Caller holds ss.mu.
func (ss *session) free(e entry) {
	used := ss.slots[e.key]
	if e.slot >= len(used) || used[e.slot] != e.owner || ss.grants[e.name] != nil {
		return
	}
	used[e.slot] = ownerID{}
	for len(used) > 0 && used[len(used)-1] == (ownerID{}) {
		used = used[:len(used)-1]
	}
	if len(used) == 0 {
		delete(ss.slots, e.key)
	} else {
		ss.slots[e.key] = used
	}
}

// retireSlot keeps e's slot claimed for the session's life: a key of that name
// exists that the session does not know (see joinQueue).
func (ss *session) retireSlot(e entry) {
	ss.mu.Lock()
	if used := ss.slots[e.key]; e.slot < len(used) && used[e.slot] == e.owner {
		used[e.slot] = retiredSlot
	}
	ss.mu.Unlock()
}

// retiredSlot marks a slot that is never used again, and the zero ownerID a
// free one; no owner hashes to either (but with odds of 2^-128).
var retiredSlot = ownerID{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}

// addOrphan queues an entry for housekeeping to delete.
func (ss *session) addOrphan(o orphan) {
	ss.mu.Lock()
	if !ss.gone {
		ss.orphans = append(ss.orphans, o)
	}
	ss.mu.Unlock()
}

// track records a new grant of e made by a request sent at t0 and returns
// it and its TTL; ok is false if the session is gone.
func (ss *session) track(e entry, token int64, t0 time.Time) (*grantRec, time.Duration, bool) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if ss.gone {
		return nil, 0, false
	}
	g := &grantRec{store: ss.st, sess: ss, entry: e, token: token, deadline: t0.Add(ss.class)}
	ss.grants[e.name] = g
	ss.lastUse = time.Now()
	return g, max(ss.ttlFrom(t0), time.Millisecond), true
}

// grantOf returns the tracked grant of key named name, if its owner and
// token match. Caller holds ss.mu.
func (ss *session) grantOf(name, key string, owner ownerID, token int64) *grantRec {
	g := ss.grants[name]
	if ss.gone || g == nil || g.token != token || g.owner != owner || g.key != key {
		return nil
	}
	return g
}

// renewed extends a tracked grant's deadline after a successful renew sent
// at t0 and returns its TTL; ok is false if the grant is no longer tracked.
func (ss *session) renewed(name, key string, owner ownerID, token int64, t0 time.Time) (time.Duration, bool) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	g := ss.grantOf(name, key, owner, token)
	if g == nil || t0.After(g.deadline) {
		return 0, false
	}
	if d := t0.Add(ss.class); d.After(g.deadline) {
		g.deadline = d
	}
	return ss.ttlFrom(t0), true
}

// tracked reports whether the session still keeps the grant.
func (ss *session) tracked(name, key string, owner ownerID, token int64) bool {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	g := ss.grantOf(name, key, owner, token)
	return g != nil && !time.Now().After(g.deadline)
}

// untrack forgets a grant (released or refused) and frees its slot. A call
// with another owner or token than the grant's changes nothing.
func (ss *session) untrack(name, key string, owner ownerID, token int64) {
	ss.mu.Lock()
	if g := ss.grantOf(name, key, owner, token); g != nil {
		delete(ss.grants, name)
		ss.free(g.entry)
		ss.lastUse = time.Now()
	}
	idle := ss.refs == 0 && len(ss.grants) == 0
	ss.mu.Unlock()
	if idle && ss.st.idle < 0 {
		ss.poke()
	}
}

// acquiring reports whether an acquire of name is in progress.
func (ss *session) acquiring(name string) bool {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return ss.inflight[name] > 0
}

// releasing takes a tracked grant out of the session's grants for a release
// by a plain delete of its name, keeping its slot claimed and its name busy
// (housekeeping leaves it alone) until released settles it: while the slot
// is claimed the session puts nothing else under that name, so the delete
// can only remove this grant's entry. ok is false if the grant is not
// tracked or its deadline has passed (Release then checks the token in
// etcd).
func (ss *session) releasing(name, key string, owner ownerID, token int64) (*grantRec, bool) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	g := ss.grantOf(name, key, owner, token)
	if g == nil || time.Now().After(g.deadline) {
		return nil, false
	}
	delete(ss.grants, g.name)
	ss.inflight[g.name]++
	return g, true
}

// released settles a release of g begun by releasing. If etcd answered the
// delete, the entry is gone and the slot free again. If not, the delete
// may still be applied later, so the slot's name is never used again (a
// late delete then finds this grant's entry or nothing), and the grant is
// tracked again: a retried release, or housekeeping at its deadline,
// deletes it.
func (ss *session) released(g *grantRec, answered bool) {
	ss.mu.Lock()
	if ss.inflight[g.name]--; ss.inflight[g.name] <= 0 {
		delete(ss.inflight, g.name)
	}
	ss.lastUse = time.Now()
	if answered {
		ss.free(g.entry)
	} else if !ss.gone {
		if used := ss.slots[g.key]; g.slot < len(used) && used[g.slot] == g.owner {
			used[g.slot] = retiredSlot
		}
		ss.grants[g.name] = g
	}
	idle := ss.refs == 0 && len(ss.grants) == 0
	ss.mu.Unlock()
	if idle && ss.st.idle < 0 {
		ss.poke()
	}
}
