package consul

import (
	"context"
	"fmt"
	"time"

	"github.com/hashicorp/consul/api"
	"github.com/leasehold-go/leasehold"
)

// Renew confirms, by one consistent read, that g's entry is still locked by
// the store's session with g's token and owner tag in its value. The Consul session under the entry is renewed by the
// session's own goroutine, every (session TTL - TTL)/2, and first by Renew
// itself if those renewals are late; Renew extends the grant's own
// deadline, after which an unrenewed grant is unlocked.
//
// A grant not made by this Store value (a handle since closed: the CLI's
// one-shot commands) is renewed by renewing the Consul session that holds
// its entry, then confirming the entry by a consistent read.
func (s *Store) Renew(ctx context.Context, g leasehold.Grant) (leasehold.Grant, error) {
	if err := s.sessions.Enter(ctx, "renew", leasehold.CheckRenew(g, s.Info())); err != nil {
		return leasehold.Grant{}, err
	}
	r := s.ref(g)
	if r == nil {
		return s.renewForeign(ctx, g)
	}
	ss := r.sess
	name, tag := s.KeyOf(g.Key), ownerTag(g.Owner)
	rec, kept := ss.tracked(name, tag, g.Token)
	if !kept {
		if ss.IsLost() {
			if err := ss.LostErr(); err != nil { // set before lost closed
				return leasehold.Grant{}, notHeldBecause("renew", g.Key, err)
			}
			return leasehold.Grant{}, notHeld("renew", g.Key, ss.whyLost())
		}
		return leasehold.Grant{}, notHeld("renew", g.Key, "")
	}
	t0, err := ss.fresh(ctx, "renew", g.Key)
	if err != nil {
		return leasehold.Grant{}, err
	}
	kv, meta, err := s.cli.KV().Get(name, (&api.QueryOptions{RequireConsistent: true}).WithContext(ctx))
	if err != nil {
		return leasehold.Grant{}, storeErr(ctx, "renew", g.Key, err)
	}
	// rec.index, the ModifyIndex the grant's lock wrote, is fixed for the
	// grant: read before the read above, it is still the one to compare.
	if err := s.checkIndex(rec.index, meta.LastIndex); err != nil {
		return leasehold.Grant{}, notHeldBecause("renew", g.Key, err)
	}
	if why := heldBy(kv, ss.id, tag, g.Token); why != "" {
		ss.untrack(name, g.Token)
		return leasehold.Grant{}, notHeld("renew", g.Key, why)
	}
	ttl, ok := ss.renewed(name, tag, g.Token, t0)
	switch {
	case !ok:
		return leasehold.Grant{}, notHeld("renew", g.Key, "expired")
	case ttl < ss.class:
		return leasehold.Grant{}, &leasehold.StoreError{Store: Name, Op: "renew", Err: fmt.Errorf("key %q: %w", g.Key, errRenewOverdue)}
	}
	g.TTL = ttl
	return g, nil
}

// heldBy returns "" if kv is the entry of a grant with token and owner tag
// locked by session sid ("" for any session), or else why not.
func heldBy(kv *api.KVPair, sid, tag string, token uint64) string {
	switch {
	case kv == nil:
		return "its entry is gone"
	case kv.Session == "":
		return "its entry is unlocked (released, or its session was invalidated)"
	case sid != "" && kv.Session != sid:
		return "its entry is locked by another session"
	}
	v, ok := decodeEntry(kv)
	switch {
	case !ok:
		return "its entry holds another owner (a value leasehold did not write)"
	case v.Token != token:
		return fmt.Sprintf("its entry has changed since (token %d)", v.Token)
	case v.Owner != tag:
		return "its entry holds another owner"
	}
	return ""
}

// renewForeign renews a grant this Store value did not make: it renews the
// Consul session that locks the grant's entry (sent at t0), then confirms
// by a consistent read that the entry is still the grant's. The TTL is the
// grant's class, or less if the session's TTL is shorter.
func (s *Store) renewForeign(ctx context.Context, g leasehold.Grant) (leasehold.Grant, error) {
	name, tag := s.KeyOf(g.Key), ownerTag(g.Owner)
	consistent := (&api.QueryOptions{RequireConsistent: true}).WithContext(ctx)
	kv, _, err := s.cli.KV().Get(name, consistent)
	if err != nil {
		return leasehold.Grant{}, storeErr(ctx, "renew", g.Key, err)
	}
	if why := heldBy(kv, "", tag, g.Token); why != "" {
		return leasehold.Grant{}, notHeld("renew", g.Key, why)
	}
	sid := kv.Session
	t0 := time.Now()
	entry, _, err := s.cli.Session().Renew(sid, (&api.WriteOptions{}).WithContext(ctx))
	if err != nil {
		return leasehold.Grant{}, storeErr(ctx, "renew", g.Key, err)
	}
	if entry == nil {
		return leasehold.Grant{}, notHeld("renew", g.Key, "its Consul session is gone")
	}
	kv, _, err = s.cli.KV().Get(name, consistent)
	if err != nil {
		return leasehold.Grant{}, storeErr(ctx, "renew", g.Key, err)
	}
	if why := heldBy(kv, sid, tag, g.Token); why != "" {
		return leasehold.Grant{}, notHeld("renew", g.Key, why)
	}
	sttl, err := time.ParseDuration(entry.TTL)
	if err != nil || sttl < time.Second || sttl > MaxSessionTTL {
		// Not a session leasehold made (its TTL is 1.5 x a class, at least
		// 10 s): one without a TTL would never end.
		return leasehold.Grant{}, &leasehold.StoreError{Store: Name, Op: "renew", Err: fmt.Errorf("key %q: %w", g.Key,
			&leasehold.ForeignRecordError{Object: "Consul session " + sid, Reason: fmt.Sprintf("its TTL %q is not between 1s and %s", entry.TTL, MaxSessionTTL)})}
	}
	g.TTL = min(classOf(g.TTL), time.Until(t0.Add(sttl)))
	if g.TTL <= 0 {
		return leasehold.Grant{}, notHeld("renew", g.Key, "its Consul session may have expired meanwhile")
	}
	return g, nil
}

// ref returns g's session state if g was granted by this store.
func (s *Store) ref(g leasehold.Grant) *grantRef {
	if r, ok := g.Private.(*grantRef); ok && r.store == s {
		return r
	}
	return nil
}
