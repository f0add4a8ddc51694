package etcd

import (
	"context"

	"github.com/leasehold-go/leasehold"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// Release deletes g's entry in one transaction if its CreateRevision is still
// g's token and its value names g's owner:
//
//	If(CreateRevision(entry) == token, entry's value is the owner's) Then(Delete(entry))
//
// A stale holder therefore cannot delete a newer holder's entry, even one
// that reuses its name (etcd issue #22082, where a lone Mutex.Unlock could),
// nor can anyone without the owner id. A grant rebuilt from its key, owner
// and token (another process's) is first looked for in its key's queue by
// its token: one more round trip.
func (s *Store) Release(ctx context.Context, g leasehold.Grant) error {
	if err := leasehold.CheckRelease(g); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if s.isClosed() {
		return s.closedErr("release")
	}
	h, tok := ownerHash(g.Owner), int64(g.Token)
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
		If(holds(name, h, tok)...).
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
