package etcd

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/leasehold-go/leasehold"
	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// Renew checks in one transaction that g's entry still has g's token as its
// CreateRevision and g's owner in its value. The etcd lease under the entry
// is the session's, kept alive by the session's keepalive stream; Renew
// extends the grant's own deadline, after which an unrenewed grant is
// deleted.
//
// A grant not made by this Store value (a handle since closed, another
// process) is renewed by a keepalive of the etcd lease its entry is under,
// after a read that finds the entry: one or two more round trips.
func (s *Store) Renew(ctx context.Context, g leasehold.Grant) (leasehold.Grant, error) {
	if err := s.sessions.Enter(ctx, "renew", leasehold.CheckRenew(g, s.Info())); err != nil {
		return leasehold.Grant{}, err
	}
	r := s.ref(g)
	if r == nil {
		return s.renewForeign(ctx, g)
	}
	ss := r.sess
	name, h, tok := r.entry.name, ownerHash(g.Owner), int64(g.Token)
	if err := ss.checkTracked(name, g.Key, h, tok); err != nil {
		return leasehold.Grant{}, err
	}
	t0, err := ss.fresh(ctx, "renew")
	if err != nil {
		return leasehold.Grant{}, err
	}
	resp, err := s.cli.Txn(clientv3.WithRequireLeader(ctx)).
		If(s.grantCmps(g, name, h, tok)...).
		Then(linearizable(name)).
		Commit()
	if err != nil {
		return leasehold.Grant{}, s.storeErrOn(ctx, "renew", err)
	}
	if !resp.Succeeded {
		ss.untrack(name, g.Key, h, tok)
		return leasehold.Grant{}, notHeld("renew", g.Key, "")
	}
	ttl, err := ss.renewedTTL(name, g.Key, h, tok, t0)
	if err != nil {
		return leasehold.Grant{}, err
	}
	g.TTL = ttl
	return g, nil
}

// holds returns the compares that hold only while entry name is the one
// created at token (names are reused, each creation has its own
// CreateRevision) and is the entry of the owner with hash h.
func holds(name string, h ownerID, token int64) []clientv3.Cmp {
	return append([]clientv3.Cmp{clientv3.Compare(clientv3.CreateRevision(name), "=", token)}, ownerCmps(name, h)...)
}

// grantCmps returns the compares that guard a release or renewal of g, whose
// owner has hash h, on its entry name: holds's three, or only the
// CreateRevision compare when g carries this store's record of that very
// entry, owner and token. An entry's value is written once, by the put that
// creates it (Acquire and joinQueue put only names that do not exist), so
// the entry created at the record's token holds the record's owner for as
// long as it exists; the owner is checked against the record here, in the
// process, instead of by two more compares (two more reads) in etcd.
func (s *Store) grantCmps(g leasehold.Grant, name string, h ownerID, token int64) []clientv3.Cmp {
	if r := s.ref(g); r != nil && r.name == name && r.owner == h && r.token == token && r.key == g.Key {
		return []clientv3.Cmp{clientv3.Compare(clientv3.CreateRevision(name), "=", token)}
	}
	return holds(name, h, token)
}

// checkTracked returns nil if the session still keeps the grant of key
// named name with owner hash h and token tok, or the ErrNotHeld a renewal
// of it gets.
func (ss *session) checkTracked(name, key string, h ownerID, tok int64) error {
	if ss.tracked(name, key, h, tok) {
		return nil
	}
	if ss.IsLost() {
		return notHeld("renew", key, "session lease lost")
	}
	return notHeld("renew", key, "")
}

// renewedTTL extends the tracked grant of key after etcd confirmed it by a
// request sent at t0, and returns its TTL: an error if the grant expired
// meanwhile or the session's lease cannot be shown to last a class's TTL.
func (ss *session) renewedTTL(name, key string, h ownerID, tok int64, t0 time.Time) (time.Duration, error) {
	ttl, ok := ss.renewed(name, key, h, tok, t0)
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
	kv, err := s.findEntry(ctx, g)
	if err != nil {
		return leasehold.Grant{}, s.storeErrOn(ctx, "renew", err)
	}
	if kv == nil || kv.Lease == 0 {
		return leasehold.Grant{}, notHeld("renew", g.Key, "")
	}
	t0 := time.Now()
	ka, err := s.cli.KeepAliveOnce(clientv3.WithRequireLeader(ctx), clientv3.LeaseID(kv.Lease))
	if err != nil {
		if isLeaseNotFound(err) {
			return leasehold.Grant{}, notHeld("renew", g.Key, "lease expired")
		}
		return leasehold.Grant{}, s.storeErrOn(ctx, "renew", err)
	}
	g.TTL = min(classOf(g.TTL), time.Until(t0.Add(leaseTTL(ka.TTL))))
	if g.TTL <= 0 {
		return leasehold.Grant{}, notHeld("renew", g.Key, "lease expired")
	}
	return g, nil
}

// findEntry reads g's entry, or returns nil if no entry has g's token as its
// CreateRevision and g's owner in its value. A grant made by a Store
// (another handle's, perhaps closed) names its entry; one rebuilt from its
// key, owner and token is looked for in its key's queue by its token.
func (s *Store) findEntry(ctx context.Context, g leasehold.Grant) (*mvccpb.KeyValue, error) {
	tok := int64(g.Token)
	var resp *clientv3.GetResponse
	var err error
	if name := nameOf(s.prefix, g); name != "" {
		resp, err = s.cli.Get(clientv3.WithRequireLeader(ctx), name)
	} else {
		resp, err = s.cli.Get(clientv3.WithRequireLeader(ctx), QueuePrefix(s.prefix, g.Key),
			clientv3.WithPrefix(), clientv3.WithMinCreateRev(tok), clientv3.WithMaxCreateRev(tok))
	}
	if err != nil {
		return nil, err
	}
	h := ownerHash(g.Owner)
	for _, kv := range resp.Kvs {
		if kv.CreateRevision == tok && isOwnerValue(kv.Value, h) {
			if _, _, err := checkEntry(QueuePrefix(s.prefix, g.Key), kv, false); err != nil {
				return nil, err
			}
			return kv, nil
		}
	}
	return nil, nil
}

// nameOf returns the name of g's entry in a store with the given prefix,
// as the Store that made g recorded it, or "" if g does not say.
func nameOf(prefix string, g leasehold.Grant) string {
	r, ok := g.Private.(*grantRec)
	if ok && r.key == g.Key && r.store.prefix == prefix {
		return r.entry.name // the record's name is in g.Key's queue
	}
	if ok && strings.HasPrefix(r.entry.name, QueuePrefix(prefix, g.Key)) {
		return r.entry.name
	}
	return ""
}

func notHeld(op, key, why string) error {
	if why != "" {
		return fmt.Errorf("%s %q: %s: %w", op, key, why, leasehold.ErrNotHeld)
	}
	return fmt.Errorf("%s %q: %w", op, key, leasehold.ErrNotHeld)
}

// ref returns g's session state if g was granted by this store.
func (s *Store) ref(g leasehold.Grant) *grantRec {
	if r, ok := g.Private.(*grantRec); ok && r.store == s {
		return r
	}
	return nil
}
