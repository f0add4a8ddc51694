package zookeeper

import (
	"context"
	"errors"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/leasehold-go/leasehold"
)

// Renew confirms g in one write through the ensemble's leader: a multi
// holding one check of g's node. The leader refuses it if the session has
// expired (or is being expired) and the node is then gone, so a confirmed
// renewal proves that the grant stood when the leader processed it, after
// the request was sent. Renew does not touch the session (the client
// library's pings keep it alive); it extends the grant's own deadline, after
// which housekeeping deletes an unrenewed grant. A grant whose deadline
// passed is not renewed, even if its node is still there.
//
// Only the Store that made a grant can renew it: the node belongs to that
// Store's session (Info().PortableGrants is false).
func (s *Store) Renew(ctx context.Context, g leasehold.Grant) (leasehold.Grant, error) {
	if err := leasehold.CheckRenew(g, s.Info()); err != nil {
		return leasehold.Grant{}, err
	}
	if err := ctx.Err(); err != nil {
		return leasehold.Grant{}, err
	}
	if s.sessions.Closed() {
		return leasehold.Grant{}, s.closedErr("renew")
	}
	ss, p, err := s.grantNode("renew", g, true)
	if err != nil {
		return leasehold.Grant{}, err
	}
	t0 := time.Now()
	err = ss.call(ctx, func() error {
		res, err := ss.conn.Multi(&zk.CheckVersionRequest{Path: p, Version: -1})
		if err == nil && len(res) > 0 {
			err = res[0].Error
		}
		return err
	})
	switch {
	case err == nil:
	case errors.Is(err, zk.ErrNoNode):
		ss.untrack(g.Token)
		return leasehold.Grant{}, notHeld("renew", g.Key, "its node is gone")
	case errors.Is(err, zk.ErrSessionExpired):
		ss.markLost()
		return leasehold.Grant{}, notHeld("renew", g.Key, "the session expired")
	default:
		return leasehold.Grant{}, s.storeErr(ctx, "renew", p, err)
	}
	if !ss.renewed(g.Token, t0) {
		return leasehold.Grant{}, notHeld("renew", g.Key, "expired")
	}
	g.TTL = ss.class
	return g, nil
}

// grantNode returns the session and node of g, if this store keeps g for
// g.Owner and g.Token (and, if live, g's deadline has not passed), or the
// ErrNotHeld that op of it gets.
func (s *Store) grantNode(op string, g leasehold.Grant, live bool) (*session, string, error) {
	r, ok := g.Private.(*grantRef)
	if !ok || r.store != s {
		return nil, "", notHeld(op, g.Key, "not granted by this store (a ZooKeeper grant lives in the session that made it)")
	}
	ss := r.sess
	now := time.Now()
	if !live {
		now = time.Time{}
	}
	p, ok := ss.lookup(g.Key, idOf(g.Owner), g.Token, now)
	if !ok {
		if ss.IsLost() {
			return nil, "", notHeld(op, g.Key, "the session expired")
		}
		return nil, "", notHeld(op, g.Key, "")
	}
	return ss, p, nil
}

// Release deletes g's node if this store keeps g for g.Owner and g.Token. A
// stale holder cannot delete a newer holder's node: a node's name carries
// its owner's id and its token is checked.
func (s *Store) Release(ctx context.Context, g leasehold.Grant) error {
	if err := s.sessions.Enter(ctx, "release", leasehold.CheckRelease(g)); err != nil {
		return err
	}
	ss, p, err := s.grantNode("release", g, false)
	if err != nil {
		return err
	}
	err = ss.call(ctx, func() error { return ss.conn.Delete(p, -1) })
	switch {
	case err == nil:
		ss.untrack(g.Token)
		return nil
	case errors.Is(err, zk.ErrNoNode):
		ss.untrack(g.Token)
		return notHeld("release", g.Key, "")
	case errors.Is(err, zk.ErrSessionExpired):
		ss.markLost()
		return notHeld("release", g.Key, "the session expired")
	}
	return s.storeErr(ctx, "release", p, err)
}

// Holder reports the current holder of key: the oldest node of its queue,
// read after a sync (so that a grant or release made through another
// server is seen). Remaining is the holder's time left when this store
// keeps the grant, else 0: another process's deadline is its own.
func (s *Store) Holder(ctx context.Context, key string) (leasehold.Holder, error) {
	if err := s.sessions.Enter(ctx, "holder", leasehold.CheckHolder(key)); err != nil {
		return leasehold.Holder{}, err
	}
	ss, err := s.anySession(ctx)
	if err != nil {
		return leasehold.Holder{}, err
	}
	defer ss.Drop()
	parent := s.ParentOf(key)
	if err := ss.call(ctx, func() error { _, err := ss.conn.Sync(parent); return err }); err != nil && !errors.Is(err, zk.ErrNoNode) {
		return leasehold.Holder{}, s.storeErr(ctx, "holder", parent, err)
	}
	for range 3 {
		q, err := s.list(ctx, ss, "holder", parent)
		if err != nil {
			return leasehold.Holder{}, err
		}
		if len(q) == 0 {
			return leasehold.Holder{}, notHeld("holder", key, "")
		}
		var data []byte
		var stat *zk.Stat
		err = ss.call(ctx, func() (err error) { data, stat, err = ss.conn.Get(parent + "/" + q[0].name); return err })
		if errors.Is(err, zk.ErrNoNode) {
			continue // the holder left meanwhile
		}
		if err != nil {
			return leasehold.Holder{}, s.storeErr(ctx, "holder", parent, err)
		}
		tok, err := checkHolder(parent+"/"+q[0].name, stat)
		if err != nil {
			return leasehold.Holder{}, &leasehold.StoreError{Store: Name, Op: "holder", Err: err}
		}
		return leasehold.Holder{Key: key, Label: string(data), Token: tok, Remaining: s.remaining(tok)}, nil
	}
	return leasehold.Holder{}, notHeld("holder", key, "")
}

// remaining returns the time left on the grant with token if one of the
// store's sessions keeps it, else 0.
func (s *Store) remaining(token uint64) time.Duration {
	for _, ss := range s.sessions.All() {
		if d := ss.remaining(token); d > 0 {
			return d
		}
	}
	return 0
}
