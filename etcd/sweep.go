package etcd

import (
	"context"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// housekeep deletes expired grants and orphans, and revokes the session's
// lease when it has been idle for the store's idle timeout.
func (ss *session) housekeep() {
	ss.Housekeep(ss.sweep, func() { ss.close(ss.st.sessions.Ctx()) })
}

// sweep deletes grants past their deadline and orphans; the slots of those
// it settled are free again.
func (ss *session) sweep() {
	ss.Sweep(ss.st.sessions.Ctx(), func(ctx context.Context, todo []orphan) ([]orphan, func()) {
		failed, settled := ss.deleteOrphans(ctx, todo)
		return failed, func() {
			for _, o := range settled {
				ss.free(o.entry)
			}
		}
	})
}

// maxBatch bounds the nested transactions in one etcd transaction: etcd
// refuses more than --max-txn-ops (default 128) operations, counting a nested
// transaction's compares against what is left of the budget.
const maxBatch = 64

// deleteOrphans deletes what it can of todo and returns the rest, and the
// orphans it settled.
func (ss *session) deleteOrphans(ctx context.Context, todo []orphan) (failed, settled []orphan) {
	var batch []orphan
	for _, o := range todo {
		if o.token == 0 {
			if ss.deleteIfUntracked(ctx, o) {
				settled = append(settled, o)
			} else {
				failed = append(failed, o)
			}
			continue
		}
		batch = append(batch, o)
	}
	for len(batch) > 0 {
		n := min(len(batch), maxBatch)
		chunk := batch[:n]
		batch = batch[n:]
		ops := make([]clientv3.Op, 0, n)
		for _, o := range chunk {
			ops = append(ops, clientv3.OpTxn(
				[]clientv3.Cmp{clientv3.Compare(clientv3.CreateRevision(o.name), "=", o.token)},
				[]clientv3.Op{clientv3.OpDelete(o.name)}, nil))
		}
		if _, err := ss.st.cli.Txn(ctx).Then(ops...).Commit(); err != nil {
			failed = append(failed, chunk...)
		} else {
			settled = append(settled, chunk...)
		}
	}
	return failed, settled
}

// deleteIfUntracked deletes o's entry if it is under the session's lease,
// holds o's owner (the abandoned acquire's: the clean-up never reaches
// another attempt's entry, whatever its name) and is not a grant the
// session tracks or is acquiring: the result of an acquire whose reply was
// lost. It reports whether o is settled.
func (ss *session) deleteIfUntracked(ctx context.Context, o orphan) bool {
	if ss.Acquiring(o.name) {
		return false
	}
	resp, err := ss.st.cli.Get(ctx, o.name)
	if err != nil {
		return false
	}
	if len(resp.Kvs) == 0 {
		return true
	}
	kv := resp.Kvs[0]
	if clientv3.LeaseID(kv.Lease) != ss.id || !isOwnerValue(kv.Value, o.owner) {
		return true // another attempt's
	}
	ss.Mu.Lock()
	g, ok := ss.GrantLocked(o.name)
	tracked := ok && g.token == kv.CreateRevision
	busy := ss.BusyLocked(o.name)
	ss.Mu.Unlock()
	if tracked {
		return true
	}
	if busy {
		return false
	}
	_, err = ss.st.cli.Txn(ctx).
		If(holds(o.name, o.owner, kv.CreateRevision)...).
		Then(clientv3.OpDelete(o.name)).Commit()
	return err == nil
}
