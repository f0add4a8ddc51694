package etcd

import (
	"context"

	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/internal/sessionpool"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// Release deletes g's entry if its CreateRevision is still g's token and its
// value names g's owner. A grant this Store made and still tracks (same
// owner, token and key, deadline not passed) is checked here, in the
// process, and released by a plain Delete of its entry, as
// concurrency.Mutex.Unlock does, but safely: its slot stays claimed until
// the delete is answered (and is never used again if it is not), so the
// name holds this grant's entry or nothing (see session.releasing). Any
// other grant is checked in etcd, in one transaction:
//
//	If(CreateRevision(entry) == token, entry's value is the owner's) Then(Delete(entry))
//
// A stale holder therefore cannot delete a newer holder's entry, even one
// that reuses its name (etcd issue #22082, where a lone Mutex.Unlock could),
// nor can anyone without the owner id. A grant rebuilt from its key, owner
// and token (another process's) is first looked for in its key's queue by
// its token: one more round trip.
func (s *Store) Release(ctx context.Context, g leasehold.Grant) error {
	if err := s.sessions.Enter(ctx, "release", leasehold.CheckRelease(g)); err != nil {
		return err
	}
	h, tok := ownerHash(g.Owner), int64(g.Token)
	if r := s.ref(g); r != nil && r.key == g.Key {
		if rec, ok := r.sess.releasing(r.name, g.Key, h, tok); ok {
			return s.releaseTracked(ctx, rec)
		}
	}
	name := nameOf(s.prefix, g)
	if name == "" {
		kv, err := s.findEntry(ctx, g)
		if err != nil {
			return s.storeErrOn(ctx, "release", err)
		}
		if kv == nil {
			return notHeld("release", g.Key, "")
		}
		name = string(kv.Key)
	}
	resp, err := s.cli.Txn(clientv3.WithRequireLeader(ctx)).
		If(s.grantCmps(g, name, h, tok)...).
		Then(clientv3.OpDelete(name)).
		Commit()
	if err != nil {
		return s.storeErrOn(ctx, "release", err)
	}
	if r := s.ref(g); r != nil {
		r.sess.untrack(name, g.Key, h, tok)
	}
	if !resp.Succeeded {
		return notHeld("release", g.Key, "")
	}
	return nil
}

// releaseTracked deletes the entry of rec, a grant taken out of its
// session's grants by session.releasing, and settles it.
func (s *Store) releaseTracked(ctx context.Context, rec *sessionpool.Entry[*grantRec]) error {
	g := rec.Grant
	resp, err := s.cli.Delete(clientv3.WithRequireLeader(ctx), g.name)
	g.sess.released(rec, err == nil)
	if err != nil {
		return s.storeErrOn(ctx, "release", err)
	}
	if resp.Deleted == 0 {
		// The entry is gone though the grant was tracked: its session's
		// etcd lease expired or was revoked.
		return notHeld("release", g.key, "")
	}
	return nil
}
