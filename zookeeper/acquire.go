package zookeeper

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/leasehold-go/leasehold"
)

// grantRef is a Grant's Private state: the session keeping the grant.
type grantRef struct {
	store *Store
	sess  *session
}

// parentMark is the data of the key parents leasehold creates: a parent
// whose data has another length, or that is ephemeral, is not leasehold's.
// (ZooKeeper does not tell clients whether a node is a container: it
// reports an EphemeralOwner of 0 for containers as for persistent nodes.)
var parentMark = []byte("leasehold key")

// Acquire claims req.Key: it creates an ephemeral sequential node named with
// the attempt's id in the key's queue, then lists the queue. If the node is
// the oldest, the key is the caller's and the node's creation zxid is the
// token; otherwise it deletes the node and returns a *leasehold.HeldError
// naming the holder (its label and token; Remaining is 0, the holder's
// time being its own session's). Acquire never jumps the queue of
// AcquireWait callers. The first acquire of a TTL class also establishes
// the class's session.
func (s *Store) Acquire(ctx context.Context, req leasehold.AcquireRequest) (leasehold.Grant, error) {
	if err := leasehold.CheckAcquire(req, s.Info()); err != nil {
		return leasehold.Grant{}, err
	}
	return s.onSession(ctx, req, false)
}

// onSession acquires req on the session of its TTL class (waiting in the
// queue if wait), once more on a fresh session if the first one expired
// under it.
func (s *Store) onSession(ctx context.Context, req leasehold.AcquireRequest, wait bool) (leasehold.Grant, error) {
	if err := ctx.Err(); err != nil {
		return leasehold.Grant{}, err
	}
	for attempt := 0; ; attempt++ {
		ss, err := s.sessions.Use(ctx, s.classOf(req.TTL))
		if err != nil {
			return leasehold.Grant{}, err
		}
		g, err := s.acquireOn(ctx, ss, req, wait)
		ss.Drop()
		if attempt == 0 && errors.Is(err, ErrSessionLost) && ctx.Err() == nil && !s.sessions.Closed() {
			continue // the session expired under us: one more try on a new one
		}
		return g, err
	}
}

func (s *Store) acquireOn(ctx context.Context, ss *session, req leasehold.AcquireRequest, wait bool) (leasehold.Grant, error) {
	parent := s.ParentOf(req.Key)
	t0 := time.Now()
	c, err := s.enqueue(ctx, ss, parent, idOf(req.Owner), req.Label)
	if err != nil {
		return leasehold.Grant{}, err
	}
	p := c.path
	// From here on the node is ours: any failure deletes it.
	token, head, err := s.position(ctx, ss, parent, c)
	if err == nil && head.name != nodeName(p) {
		if !wait {
			return leasehold.Grant{}, s.held(ctx, ss, req.Key, parent, head, p)
		}
		t0, err = s.awaitTurn(ctx, ss, parent, p)
	}
	if err == nil && !ss.track(req.Key, p, token, t0) {
		err = &leasehold.StoreError{Store: Name, Op: "acquire", Err: ErrSessionLost}
	}
	if err != nil {
		s.leave(ss, p)
		return leasehold.Grant{}, err
	}
	return leasehold.Grant{
		Key: req.Key, Owner: req.Owner, Label: req.Label,
		Token:   token,
		TTL:     ss.class,
		Lost:    ss.Done(),
		Private: &grantRef{store: s, sess: ss},
	}, nil
}

// enqueue creates the attempt's node in parent, creating parent (a
// container) and the base path when missing, and returns what the create
// told of it.
func (s *Store) enqueue(ctx context.Context, ss *session, parent, id, label string) (created, error) {
	var err error
	for range 5 {
		var c created
		c, err = s.create(ctx, ss, parent, id, label)
		switch {
		case err == nil:
			return c, nil
		case errors.Is(err, zk.ErrNoNode):
			// The parent is missing (never made, or a container deleted
			// when its last child went): make it, and try again.
			if err := s.makeParent(ctx, ss, parent); err != nil {
				return created{}, err
			}
		case errors.Is(err, errUnknownOutcome):
			// The create was not applied: try again.
		default:
			return created{}, err
		}
	}
	return created{}, s.storeErr(ctx, "acquire", parent, err)
}

// create creates the attempt's ephemeral sequential node "<id>-" in
// parent. A create whose answer was lost (the connection broke) may have
// been applied: the node is then found by its id after a sync (the Curator
// "protected mode"); if it cannot be looked for, housekeeping deletes it
// later. A create whose caller left before its answer deletes the node it
// made.
func (s *Store) create(ctx context.Context, ss *session, parent, id, label string) (created, error) {
	var c created
	want, verified := s.parents.Get(parent)
	err := ss.callOr(ctx, func() (err error) {
		if verified {
			c, err = s.createOnVerified(ss, parent, id, label, want)
			return err
		}
		c.path, err = ss.conn.Create(parent+"/"+id+"-", []byte(label), zk.FlagEphemeral|zk.FlagSequence, s.acl)
		return err
	}, func(err error) {
		switch {
		case err == nil:
			s.leave(ss, c.path)
		case errors.Is(err, zk.ErrConnectionClosed):
			ss.AddOrphan(orphan{parent: parent, id: id})
		}
	})
	switch {
	case err == nil:
		return c, nil
	case errors.Is(err, zk.ErrConnectionClosed):
		found, ferr := s.findOwn(ctx, ss, parent, id)
		if ferr != nil {
			ss.AddOrphan(orphan{parent: parent, id: id})
			return created{}, s.storeErr(ctx, "acquire", parent, err)
		}
		if found == "" {
			return created{}, errUnknownOutcome
		}
		return created{path: found}, nil
	case errors.Is(err, zk.ErrSessionExpired):
		ss.markLost()
	case errors.Is(err, zk.ErrNoNode):
		return created{}, err
	}
	if ctx.Err() == nil && ss.IsLost() {
		return created{}, &leasehold.StoreError{Store: Name, Op: "acquire", Err: fmt.Errorf("%s: %w", parent, ErrSessionLost)}
	}
	return created{}, s.storeErr(ctx, "acquire", parent, err)
}

// findOwn looks for the nodes of attempt id in parent after a sync (so
// that a create the ensemble received before is seen), deletes all but the
// oldest and returns its path ("" if there is none).
func (s *Store) findOwn(ctx context.Context, ss *session, parent, id string) (string, error) {
	if err := ss.call(ctx, func() error { _, err := ss.conn.Sync(parent); return err }); err != nil && !errors.Is(err, zk.ErrNoNode) {
		return "", err
	}
	var kids []string
	err := ss.call(ctx, func() (err error) { kids, _, err = ss.conn.Children(parent); return err })
	if errors.Is(err, zk.ErrNoNode) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	found := ""
	for _, n := range mustQueue(kids) {
		if n.id != id {
			continue
		}
		if found == "" {
			found = parent + "/" + n.name
		} else {
			s.leave(ss, parent+"/"+n.name)
		}
	}
	return found, nil
}

// mustQueue is queue without the foreign names.
func mustQueue(kids []string) []node {
	var q []node
	for _, k := range kids {
		if n, err := parseNode(k); err == nil {
			q = append(q, n)
		}
	}
	return q
}

// makeParent creates parent as a container node (and the base path if it
// is missing).
func (s *Store) makeParent(ctx context.Context, ss *session, parent string) error {
	for range 2 {
		err := ss.call(ctx, func() error {
			_, err := ss.conn.CreateContainer(parent, parentMark, zk.FlagContainer, s.acl)
			return err
		})
		switch {
		case err == nil, errors.Is(err, zk.ErrNodeExists):
			return nil
		case errors.Is(err, zk.ErrNoNode):
			if err := s.ensureBase(ctx, ss); err != nil {
				return err
			}
		default:
			return s.storeErr(ctx, "acquire", parent, err)
		}
	}
	return s.storeErr(ctx, "acquire", parent, zk.ErrNoNode)
}

// position returns the token of the attempt's node c.path (its creation
// zxid) and the head of parent's queue. A node the create found alone in
// its queue is the head, and one whose creation zxid the create told needs
// only the list; otherwise it lists the queue and reads the node, at once.
func (s *Store) position(ctx context.Context, ss *session, parent string, c created) (uint64, node, error) {
	p := c.path
	czxid := c.czxid
	var q []node
	var err error
	switch {
	case c.alone && czxid != 0:
		q = []node{{name: nodeName(p)}}
	case czxid != 0:
		q, err = s.list(ctx, ss, "acquire", parent)
	default:
		var wg sync.WaitGroup
		var exists bool
		var stat *zk.Stat
		wg.Go(func() { q, err = s.list(ctx, ss, "acquire", parent) })
		serr := ss.call(ctx, func() (err error) { exists, stat, err = ss.conn.Exists(p); return err })
		wg.Wait()
		switch {
		case err != nil:
		case serr != nil:
			return 0, node{}, s.storeErr(ctx, "acquire", p, serr)
		case !exists:
			q = nil
		default:
			czxid = stat.Czxid
		}
	}
	if err != nil {
		return 0, node{}, err
	}
	if !slices.ContainsFunc(q, func(n node) bool { return n.name == nodeName(p) }) {
		return 0, node{}, s.vanished("acquire", ss, p)
	}
	token, err := tokenOf(p, czxid)
	if err != nil {
		return 0, node{}, &leasehold.StoreError{Store: Name, Op: "acquire", Err: err}
	}
	return token, q[0], nil
}

// vanished is the error for an attempt whose own node p is gone.
func (s *Store) vanished(op string, ss *session, p string) error {
	if ss.IsLost() {
		return &leasehold.StoreError{Store: Name, Op: op, Err: fmt.Errorf("%s: %w", p, ErrSessionLost)}
	}
	return &leasehold.StoreError{Store: Name, Op: op, Err: fmt.Errorf("%s: the node vanished (deleted by another client?)", p)}
}

// held returns the *HeldError of an acquire of key whose node p is not at
// the head of the queue, and deletes p. A head that is not a node of
// leasehold's (see checkHolder) is refused instead.
func (s *Store) held(ctx context.Context, ss *session, key, parent string, head node, p string) error {
	var wg sync.WaitGroup
	wg.Go(func() { s.leave(ss, p) })
	defer wg.Wait()
	h := &leasehold.HeldError{Key: key}
	var data []byte
	var stat *zk.Stat
	hp := parent + "/" + head.name
	if err := ss.call(ctx, func() (err error) { data, stat, err = ss.conn.Get(hp); return err }); err == nil {
		tok, err := checkHolder(hp, stat)
		if err != nil {
			return &leasehold.StoreError{Store: Name, Op: "acquire", Err: err}
		}
		h.Label, h.Token = string(data), tok
	}
	return h
}

// leave deletes node p (a waiter's or a refused attempt's), on a short
// context of its own, or leaves it to housekeeping if that fails.
func (s *Store) leave(ss *session, p string) {
	ctx, cancel := context.WithTimeout(s.sessions.Ctx(), 2*time.Second)
	defer cancel()
	err := ss.call(ctx, func() error { return ss.conn.Delete(p, -1) })
	if err != nil && !errors.Is(err, zk.ErrNoNode) {
		ss.AddOrphan(orphan{path: p})
	}
}

// nodeName returns the last element of a node path.
func nodeName(p string) string {
	for i := len(p) - 1; i >= 0; i-- {
		if p[i] == '/' {
			return p[i+1:]
		}
	}
	return p
}
