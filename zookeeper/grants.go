package zookeeper

import (
	"path"
	"time"
)

// The session's grants, references and orphans, under ss.mu.

// grantRec is a grant the session keeps.
type grantRec struct {
	path     string // the node
	key      string
	id       string // idOf(owner)
	deadline time.Time
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

// Hold takes a reference on the session for an acquire, a wait or a watch.
// It fails if the session is gone.
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

// addOrphan queues a node for housekeeping to delete.
func (ss *session) addOrphan(o orphan) {
	ss.mu.Lock()
	if !ss.gone {
		ss.orphans = append(ss.orphans, o)
	}
	ss.mu.Unlock()
	ss.poke()
}

// track records a grant of key on node p with token, made by a request
// sent at t0; ok is false if the session is gone.
func (ss *session) track(key, p string, token uint64, t0 time.Time) bool {
	ss.mu.Lock()
	if ss.gone {
		ss.mu.Unlock()
		return false
	}
	id, _, _ := cutNode(p)
	ss.grants[token] = &grantRec{path: p, key: key, id: id, deadline: t0.Add(ss.class)}
	ss.lastUse = time.Now()
	ss.mu.Unlock()
	ss.poke() // housekeeping sets its timer for the new deadline
	return true
}

// cutNode returns the id and the parent of a node path.
func cutNode(p string) (id, parent string, ok bool) {
	n, err := parseNode(path.Base(p))
	return n.id, path.Dir(p), err == nil
}

// lookup returns the node path of a grant of key to owner id with token,
// if the session keeps it and its deadline has not passed.
func (ss *session) lookup(key, id string, token uint64, now time.Time) (string, bool) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if ss.gone {
		return "", false
	}
	g := ss.grants[token]
	if g == nil || g.key != key || g.id != id || now.After(g.deadline) {
		return "", false
	}
	return g.path, true
}

// renewed extends the grant with token after ZooKeeper confirmed it by a
// request sent at t0; ok is false if the grant is no longer kept (expired
// and swept meanwhile, released, or the session lost).
func (ss *session) renewed(token uint64, t0 time.Time) bool {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	g := ss.grants[token]
	if ss.gone || g == nil || t0.After(g.deadline) {
		return false
	}
	if d := t0.Add(ss.class); d.After(g.deadline) {
		g.deadline = d
	}
	return true
}

// untrack forgets the grant with token (released or refused).
func (ss *session) untrack(token uint64) {
	ss.mu.Lock()
	if _, ok := ss.grants[token]; ok {
		delete(ss.grants, token)
		ss.lastUse = time.Now()
	}
	idle := ss.refs == 0 && len(ss.grants) == 0
	ss.mu.Unlock()
	if idle && ss.st.idle < 0 {
		ss.poke()
	}
}

// remaining returns the time left on the grant with token, if the session
// keeps it (0 if not).
func (ss *session) remaining(token uint64) time.Duration {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if g := ss.grants[token]; g != nil {
		return max(time.Until(g.deadline), 0)
	}
	return 0
}
