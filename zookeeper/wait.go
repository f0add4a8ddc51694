package zookeeper

import (
	"context"
	"errors"
	"path"
	"strings"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/leasehold-go/leasehold"
)

// AcquireWait acquires req.Key, waiting in the key's FIFO queue while it is
// held: the caller's node stays in the queue, and the caller watches only
// the node just before its own (no herd: a release wakes one waiter). When
// no older node remains, the key is the caller's, and its node's creation
// zxid is the token. A waiter whose context ends deletes its node (or has
// housekeeping delete it); a waiter whose process dies leaves the queue
// when its session expires.
func (s *Store) AcquireWait(ctx context.Context, req leasehold.AcquireRequest) (leasehold.Grant, error) {
	if err := leasehold.CheckAcquire(req, s.Info()); err != nil {
		return leasehold.Grant{}, err
	}
	return s.onSession(ctx, req, true)
}

// awaitTurn waits until no node older than p is left in parent: p then
// holds the key. It returns the send time of the read that showed it.
func (s *Store) awaitTurn(ctx context.Context, ss *session, parent, p string) (time.Time, error) {
	me := nodeName(p)
	for {
		t0 := time.Now()
		q, err := s.list(ctx, ss, "acquire", parent)
		if err != nil {
			return t0, err
		}
		i := indexOf(q, me)
		switch {
		case i < 0:
			return t0, s.vanished("acquire", ss, p)
		case i == 0:
			return t0, nil
		}
		pred := parent + "/" + q[i-1].name
		var (
			exists bool
			stat   *zk.Stat
			ch     <-chan zk.Event
		)
		if err := ss.call(ctx, func() (err error) { exists, stat, ch, err = ss.conn.ExistsW(pred); return err }); err != nil {
			return t0, s.storeErr(ctx, "acquire", pred, err)
		}
		if !exists {
			continue
		}
		if stat.EphemeralOwner == 0 {
			// A persistent node never leaves by itself: waiting for it
			// could be waiting for ever.
			return t0, foreign("acquire", pred, "a persistent node (leasehold's are ephemeral; it would hold the queue for ever)")
		}
		select {
		case <-ch: // deleted, or the watch ended: look again
		case <-ss.Done():
			return t0, s.vanished("acquire", ss, p)
		case <-ctx.Done():
			return t0, ctx.Err()
		}
	}
}

func indexOf(q []node, name string) int {
	for i, n := range q {
		if n.name == name {
			return i
		}
	}
	return -1
}

// list returns the queue of parent, oldest first (empty if parent does not
// exist). A parent that is not a container, or a child not named as
// leasehold names its nodes, is an ErrForeignNode.
func (s *Store) list(ctx context.Context, ss *session, op, parent string) ([]node, error) {
	var (
		kids []string
		stat *zk.Stat
	)
	err := ss.call(ctx, func() (err error) { kids, stat, err = ss.conn.Children(parent); return err })
	if errors.Is(err, zk.ErrNoNode) {
		return nil, nil
	}
	if err != nil {
		return nil, s.storeErr(ctx, op, parent, err)
	}
	if stat.EphemeralOwner != 0 || int(stat.DataLength) != len(parentMark) {
		s.parents.Delete(parent)
		return nil, foreign(op, parent, "not a key node of leasehold's (not its container)")
	}
	q, bad, why := queue(kids)
	if bad != "" {
		s.parents.Delete(parent)
		return nil, foreign(op, parent+"/"+bad, "not named as leasehold names its nodes: "+why.Error())
	}
	s.parents.Put(parent, stat.Czxid)
	return q, nil
}

// ensureBase creates the missing nodes of the base path (persistent, with
// the store's ACL), once per store.
func (s *Store) ensureBase(ctx context.Context, ss *session) error {
	s.baseMu.Lock()
	defer s.baseMu.Unlock()
	if s.baseOK {
		return nil
	}
	p := ""
	for _, part := range strings.Split(strings.TrimPrefix(s.base, "/"), "/") {
		p = path.Join("/", p, part)
		err := ss.call(ctx, func() error {
			if ok, _, err := ss.conn.Exists(p); ok || err != nil {
				return err
			}
			_, err := ss.conn.Create(p, nil, zk.FlagPersistent, s.acl)
			return err
		})
		if err != nil && !errors.Is(err, zk.ErrNodeExists) {
			return s.storeErr(ctx, "acquire", p, err)
		}
	}
	s.baseOK = true
	return nil
}
