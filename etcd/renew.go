package etcd

import (
	"context"
	"fmt"
	"time"

	"github.com/leasehold-go/leasehold"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// Renew checks in one transaction that g's entry still has g's token as its
// CreateRevision (the entry's name proves the owner). The etcd lease under
// the entry is the session's, kept alive by the session's keepalive
// stream; Renew extends the grant's own deadline, after which an unrenewed
// grant is deleted.
//
// A grant not made by this Store value (a handle since closed) is renewed by
// a keepalive of the etcd lease its entry is under, one more round trip.
func (s *Store) Renew(ctx context.Context, g leasehold.Grant) (leasehold.Grant, error) {
	if err := leasehold.CheckRenew(g, s.Info()); err != nil {
		return leasehold.Grant{}, err
	}
	if err := ctx.Err(); err != nil {
		return leasehold.Grant{}, err
	}
	if s.isClosed() {
		return leasehold.Grant{}, s.closedErr("renew")
	}
	r := s.ref(g)
	if r == nil {
		return s.renewForeign(ctx, g)
	}
	ss := r.sess
	name := s.KeyOf(g)
	tok := int64(g.Token)
	if err := ss.checkTracked(name, tok, g.Key); err != nil {
		return leasehold.Grant{}, err
	}
	t0, err := ss.fresh(ctx, "renew")
	if err != nil {
		return leasehold.Grant{}, err
	}
	resp, err := s.cli.Txn(clientv3.WithRequireLeader(ctx)).
		If(clientv3.Compare(clientv3.CreateRevision(name), "=", tok)).
		Then(linearizable(name)).
		Commit()
	if err != nil {
		return leasehold.Grant{}, s.storeErrOn(ctx, "renew", err)
	}
	if !resp.Succeeded {
		ss.untrack(name, tok)
		return leasehold.Grant{}, notHeld("renew", g.Key, "")
	}
	ttl, err := ss.renewedTTL(name, tok, t0, g.Key)
	if err != nil {
		return leasehold.Grant{}, err
	}
	g.TTL = ttl
	return g, nil
}

// checkTracked returns nil if the session still keeps the grant of key
// named name with token tok, or the ErrNotHeld a renewal of it gets.
func (ss *session) checkTracked(name string, tok int64, key string) error {
	if ss.tracked(name, tok) {
		return nil
	}
	if ss.isLost() {
		return notHeld("renew", key, "session lease lost")
	}
	return notHeld("renew", key, "")
}

// renewedTTL extends the tracked grant of key after etcd confirmed it by a
// request sent at t0, and returns its TTL: an error if the grant expired
// meanwhile or the session's lease cannot be shown to last a class's TTL.
func (ss *session) renewedTTL(name string, tok int64, t0 time.Time, key string) (time.Duration, error) {
	ttl, ok := ss.renewed(name, tok, t0)
	switch {
	case !ok:
		return 0, notHeld("renew", key, "expired")
	case ttl < ss.class:
		return 0, &leasehold.StoreError{Store: Name, Op: "renew", Err: errKeepaliveOverdue}
	}
	return ttl, nil
}

// linearizable returns an op that makes a compare-only transaction a
// linearizable read. etcd serves a transaction without operations, or with
// serializable ranges only, from the local member's state without asking
// the leader, so such a compare may run on a member that has not yet
// applied the put that made the grant and refuse a grant made a moment
// before. A linearizable range (a count of name) in Then makes the member
// confirm with the leader that it has applied everything committed first.
func linearizable(name string) clientv3.Op {
	return clientv3.OpGet(name, clientv3.WithCountOnly())
}

// renewForeign renews a grant this Store value did not make.
func (s *Store) renewForeign(ctx context.Context, g leasehold.Grant) (leasehold.Grant, error) {
	name := s.KeyOf(g)
	resp, err := s.cli.Get(clientv3.WithRequireLeader(ctx), name)
	if err != nil {
		return leasehold.Grant{}, s.storeErrOn(ctx, "renew", err)
	}
	if len(resp.Kvs) == 0 || resp.Kvs[0].CreateRevision != int64(g.Token) || resp.Kvs[0].Lease == 0 {
		return leasehold.Grant{}, notHeld("renew", g.Key, "")
	}
	t0 := time.Now()
	ka, err := s.cli.KeepAliveOnce(clientv3.WithRequireLeader(ctx), clientv3.LeaseID(resp.Kvs[0].Lease))
	if err != nil {
		if isLeaseNotFound(err) {
			return leasehold.Grant{}, notHeld("renew", g.Key, "lease expired")
		}
		return leasehold.Grant{}, s.storeErrOn(ctx, "renew", err)
	}
	g.TTL = min(classOf(g.TTL), t0.Add(time.Duration(ka.TTL)*time.Second).Sub(time.Now()))
	if g.TTL <= 0 {
		return leasehold.Grant{}, notHeld("renew", g.Key, "lease expired")
	}
	return g, nil
}

func notHeld(op, key, why string) error {
	if why != "" {
		return fmt.Errorf("%s %q: %s: %w", op, key, why, leasehold.ErrNotHeld)
	}
	return fmt.Errorf("%s %q: %w", op, key, leasehold.ErrNotHeld)
}

// ref returns g's session state if g was granted by this store.
func (s *Store) ref(g leasehold.Grant) *grantRef {
	if r, ok := g.Private.(*grantRef); ok && r.store == s {
		return r
	}
	return nil
}
