package consul

import "time"

// The session's grants (by KV key, with their deadlines), acquires in
// progress and orphans are its sessionpool.Core.

// grantRec is a grant the session keeps alive.
type grantRec struct {
	tag   string // ownerTag of the grant's owner
	token uint64
	index uint64 // the entry's ModifyIndex after the lock
	value []byte // the entry's value, which an unlock writes back
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

// is returns the match of the grant with owner tag and token.
func is(tag string, token uint64) func(grantRec) bool {
	return func(g grantRec) bool { return g.token == token && g.tag == tag }
}

// track records a new grant rec made by a request sent at t0 and returns
// its TTL; ok is false if the session is gone.
func (ss *session) track(name string, rec grantRec, t0 time.Time) (time.Duration, bool) {
	return ss.Track(name, rec, t0)
}

// renewed extends a tracked grant's deadline after a successful renew sent
// at t0 and returns its TTL; ok is false if the grant is no longer tracked.
func (ss *session) renewed(name, tag string, token uint64, t0 time.Time) (time.Duration, bool) {
	return ss.Renewed(name, is(tag, token), t0)
}

// tracked returns the session's record of the grant, and whether the
// session still keeps it (not lost, not past its deadline).
func (ss *session) tracked(name, tag string, token uint64) (grantRec, bool) {
	return ss.Tracked(name, is(tag, token), time.Now())
}

// keeps reports whether the session keeps a grant of name with tag and
// token, and returns a copy of it.
func (ss *session) keeps(name, tag string, token uint64) (grantRec, bool) {
	return ss.Kept(name, is(tag, token))
}

// untrack forgets a grant (released or refused).
func (ss *session) untrack(name string, token uint64) {
	ss.Untrack(name, func(g grantRec) bool { return g.token == token }, nil)
}
