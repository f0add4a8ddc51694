package etcd

import (
	"time"

	"github.com/leasehold-go/leasehold/internal/sessionpool"
)

// The session's entries and the slots that name them, under ss.Mu. The
// grants' table (by entry name), the acquires in progress and the orphans
// are the session's sessionpool.Core.

// grantRec is a grant the session keeps alive, and the grant's Private
// state: the session keeping it and its entry. It does not change once
// made; the Core keeps its deadline.
type grantRec struct {
	store *Store
	sess  *session
	entry
	token int64
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

// claim takes the lowest free slot of key for an acquire by the owner with
// hash owner and marks the acquire in progress (housekeeping leaves its
// entry alone); the caller ends it with finish. It fails with errLeaseGone
// if the session is gone, and with dup set if the owner already holds or
// waits for key on this session.
func (ss *session) claim(key string, owner ownerID) (e entry, dup bool, err error) {
	ss.Mu.Lock()
	defer ss.Mu.Unlock()
	if ss.GoneLocked() {
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
	ss.BeginLocked(e.name)
	return e, false, nil
}

// finish ends an acquire of e begun by claim. Unless keep (e became a
// grant or an orphan, which keep the slot), e's slot is free again.
func (ss *session) finish(e entry, keep bool) {
	ss.Mu.Lock()
	ss.EndLocked(e.name)
	if !keep {
		ss.free(e)
	}
	ss.Mu.Unlock()
}

// free gives e's slot back, if e still has it and no grant of its name is
// tracked. Caller holds ss.Mu.
func (ss *session) free(e entry) {
	used := ss.slots[e.key]
	if e.slot >= len(used) || used[e.slot] != e.owner || ss.HasGrantLocked(e.name) {
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
	ss.Mu.Lock()
	ss.retireSlotLocked(e)
	ss.Mu.Unlock()
}

// retireSlotLocked is retireSlot for a caller holding ss.Mu.
func (ss *session) retireSlotLocked(e entry) {
	if used := ss.slots[e.key]; e.slot < len(used) && used[e.slot] == e.owner {
		used[e.slot] = retiredSlot
	}
}

// retiredSlot marks a slot that is never used again, and the zero ownerID a
// free one; no owner hashes to either (but with odds of 2^-128).
var retiredSlot = ownerID{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}

// track records a new grant of e made by a request sent at t0 and returns
// it and its TTL; ok is false if the session is gone.
func (ss *session) track(e entry, token int64, t0 time.Time) (*grantRec, time.Duration, bool) {
	g := &grantRec{store: ss.st, sess: ss, entry: e, token: token}
	ttl, ok := ss.Track(e.name, g, t0)
	if !ok {
		return nil, 0, false
	}
	return g, ttl, true
}

// is returns the match of the grant of key with owner hash owner and token.
func is(key string, owner ownerID, token int64) func(*grantRec) bool {
	return func(g *grantRec) bool { return g.token == token && g.owner == owner && g.key == key }
}

// renewed extends a tracked grant's deadline after a successful renew sent
// at t0 and returns its TTL; ok is false if the grant is no longer tracked.
func (ss *session) renewed(name, key string, owner ownerID, token int64, t0 time.Time) (time.Duration, bool) {
	return ss.Renewed(name, is(key, owner, token), t0)
}

// tracked reports whether the session still keeps the grant.
func (ss *session) tracked(name, key string, owner ownerID, token int64) bool {
	_, ok := ss.Tracked(name, is(key, owner, token), time.Now())
	return ok
}

// untrack forgets a grant (released or refused) and frees its slot. A call
// with another owner or token than the grant's changes nothing.
func (ss *session) untrack(name, key string, owner ownerID, token int64) {
	ss.Untrack(name, is(key, owner, token), func(g *grantRec) { ss.free(g.entry) })
}

// releasing takes a tracked grant out of the session's grants for a release
// by a plain delete of its name, keeping its slot claimed and its name busy
// (housekeeping leaves it alone) until released settles it: while the slot
// is claimed the session puts nothing else under that name, so the delete
// can only remove this grant's entry. ok is false if the grant is not
// tracked or its deadline has passed (Release then checks the token in
// etcd).
func (ss *session) releasing(name, key string, owner ownerID, token int64) (*sessionpool.Entry[*grantRec], bool) {
	return ss.Take(name, is(key, owner, token))
}

// released settles a release of rec begun by releasing. If etcd answered
// the delete, the entry is gone and the slot free again. If not, the
// delete may still be applied later, so the slot's name is never used
// again (a late delete then finds this grant's entry or nothing), and the
// grant is tracked again: a retried release, or housekeeping at its
// deadline, deletes it.
func (ss *session) released(rec *sessionpool.Entry[*grantRec], answered bool) {
	ss.Settle(rec.Grant.name, rec, answered,
		func(g *grantRec) { ss.free(g.entry) },
		func(g *grantRec) { ss.retireSlotLocked(g.entry) })
}
