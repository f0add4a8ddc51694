package etcd

import (
	"context"

	"github.com/leasehold-go/leasehold"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// Release deletes g's entry in one transaction if its CreateRevision is still
// g's token:
//
//	If(CreateRevision(entry) == token) Then(Delete(entry))
//
// A stale holder therefore cannot delete a newer holder's key (etcd issue
// #22082, where a lone Mutex.Unlock could), nor can anyone without the
// owner id, which names the entry.
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
	name := s.KeyOf(g)
	tok := int64(g.Token)
	resp, err := s.cli.Txn(clientv3.WithRequireLeader(ctx)).
		If(clientv3.Compare(clientv3.CreateRevision(name), "=", tok)).
		Then(clientv3.OpDelete(name)).
		Commit()
	if err != nil {
		return s.storeErrOn(ctx, "release", err)
	}
	if r := s.ref(g); r != nil {
		r.sess.untrack(name, tok)
	}
	if !resp.Succeeded {
		return notHeld("release", g.Key, "")
	}
	return nil
}
