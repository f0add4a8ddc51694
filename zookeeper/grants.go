package zookeeper

import (
	"path"
	"time"
)

// The session's grants (by token, with their deadlines), references and
// orphans are its sessionpool.Core.

// grantRec is a grant the session keeps.
type grantRec struct {
	path string // the node
	key  string
	id   string // idOf(owner)
}

// orphan is a node of ours that must be deleted: a grant that expired
// without renewal or a waiter's node whose delete failed (path), or the
// possible result of a create whose answer was lost (the children of parent
// named with id).
type orphan struct {
	path   string
	parent string
	id     string
}

// track records a grant of key on node p with token, made by a request
// sent at t0; ok is false if the session is gone.
func (ss *session) track(key, p string, token uint64, t0 time.Time) bool {
	id, _, _ := cutNode(p)
	_, ok := ss.Track(token, grantRec{path: p, key: key, id: id}, t0)
	return ok
}

// cutNode returns the id and the parent of a node path.
func cutNode(p string) (id, parent string, ok bool) {
	n, err := parseNode(path.Base(p))
	return n.id, path.Dir(p), err == nil
}

// anyGrant matches any grant.
func anyGrant(grantRec) bool { return true }

// lookup returns the node path of a grant of key to owner id with token,
// if the session keeps it and its deadline has not passed at now (a zero
// now: whatever its deadline).
func (ss *session) lookup(key, id string, token uint64, now time.Time) (string, bool) {
	g, ok := ss.Tracked(token, func(g grantRec) bool { return g.key == key && g.id == id }, now)
	return g.path, ok
}

// renewed extends the grant with token after ZooKeeper confirmed it by a
// request sent at t0; ok is false if the grant is no longer kept (expired
// and swept meanwhile, released, or the session lost).
func (ss *session) renewed(token uint64, t0 time.Time) bool {
	_, ok := ss.Renewed(token, anyGrant, t0)
	return ok
}

// untrack forgets the grant with token (released or refused).
func (ss *session) untrack(token uint64) { ss.Untrack(token, anyGrant, nil) }

// remaining returns the time left on the grant with token, if the session
// keeps it (0 if not).
func (ss *session) remaining(token uint64) time.Duration {
	d, _ := ss.Remaining(token, anyGrant)
	return d
}
