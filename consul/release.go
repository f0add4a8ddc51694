package consul

import (
	"context"

	"github.com/hashicorp/consul/api"
	"github.com/leasehold-go/leasehold"
)

// Release unlocks g's entry (Consul's ?release=) in one transaction that
// first checks the entry's ModifyIndex is still the one g's lock gave it:
//
//	[check-index name index, unlock name session]
//
// Any write to the entry since the grant (another holder's lock, an
// invalidation's release, a delete) changes its ModifyIndex, so a stale
// holder can never unlock a newer holder's entry, even one locked by the
// same session. A grant the store still keeps is unlocked in that one round
// trip; any other (made by another Store value, or expired here) is first
// read, to check its owner tag and learn its session. The entry stays, and
// its next lock gets a greater token.
func (s *Store) Release(ctx context.Context, g leasehold.Grant) error {
	if err := s.sessions.Enter(ctx, "release", leasehold.CheckRelease(g)); err != nil {
		return err
	}
	name, tag := s.KeyOf(g.Key), ownerTag(g.Owner)
	r := s.ref(g)
	var sid string
	var rec grantRec
	kept := false
	if r != nil {
		rec, kept = r.sess.keeps(name, tag, g.Token)
	}
	if kept {
		sid = r.sess.id
	} else {
		kv, _, err := s.cli.KV().Get(name, (&api.QueryOptions{}).WithContext(ctx))
		if err != nil {
			return storeErr(ctx, "release", g.Key, err)
		}
		if why := heldBy(kv, "", tag, g.Token); why != "" {
			return notHeld("release", g.Key, why)
		}
		sid, rec.index, rec.value = kv.Session, kv.ModifyIndex, kv.Value
	}
	ok, err := unlockTxn(ctx, s.cli, name, rec.index, sid, rec.value)
	if err != nil {
		return storeErr(ctx, "release", g.Key, err)
	}
	if r != nil {
		r.sess.untrack(name, g.Token)
	}
	if !ok {
		return notHeld("release", g.Key, "its entry has changed since the grant")
	}
	return nil
}
