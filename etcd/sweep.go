package etcd

import (
	"context"
	"time"

	"github.com/leasehold-go/leasehold/internal/sessionpool"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// sweepPeriod is how often housekeeping looks for expired grants.
func (ss *session) sweepPeriod() time.Duration { return sessionpool.SweepPeriod(ss.class) }

// housekeep deletes expired grants and orphans, and tears the session down
// when it has been idle for the store's idle timeout.
func (ss *session) housekeep() {
	defer ss.st.wg.Done()
	sessionpool.Housekeep(ss.stop, ss.kick, ss.sweepPeriod(), func() bool {
		ss.sweep()
		return ss.maybeTeardown()
	})
}

// sweep moves grants past their deadline to the orphans and deletes orphans.
func (ss *session) sweep() {
	now := time.Now()
	ss.mu.Lock()
	for name, g := range ss.grants {
		if now.After(g.deadline) {
			delete(ss.grants, name)
			ss.orphans = append(ss.orphans, orphan{entry: g.entry, token: g.token})
			ss.lastUse = now
		}
	}
	todo := ss.orphans
	ss.orphans = nil
	ss.mu.Unlock()
	if len(todo) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(ss.st.ctx, max(ss.sweepPeriod(), time.Second))
	defer cancel()
	failed, settled := ss.deleteOrphans(ctx, todo)
	ss.mu.Lock()
	if !ss.gone {
		ss.orphans = append(ss.orphans, failed...)
	}
	for _, o := range settled {
		ss.free(o.entry)
	}
	ss.mu.Unlock()
}

// maybeTeardown revokes the session's lease if it has had no grants, waiters
// or pending work for the idle timeout.
func (ss *session) maybeTeardown() bool {
	idle := max(ss.st.idle, 0)
	ss.mu.Lock()
	if ss.gone || ss.refs > 0 || len(ss.grants) > 0 || len(ss.orphans) > 0 || len(ss.inflight) > 0 || time.Since(ss.lastUse) < idle {
		ss.mu.Unlock()
		return false
	}
	ss.gone = true
	ss.mu.Unlock()
	ss.st.sessions.Forget(ss.class, ss)
	ss.close(ss.st.ctx)
	return true
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
	if ss.acquiring(o.name) {
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
	ss.mu.Lock()
	g := ss.grants[o.name]
	tracked := g != nil && g.token == kv.CreateRevision
	busy := ss.inflight[o.name] > 0
	ss.mu.Unlock()
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
