package consul

import (
	"context"
	"time"

	"github.com/hashicorp/consul/api"
)

// housekeep unlocks expired grants and orphans, and destroys the session
// when it has been idle for the store's idle timeout.
func (ss *session) housekeep() {
	ss.Housekeep(ss.sweep, func() { ss.destroy(ss.st.sessions.Ctx()) })
}

// sweep unlocks grants past their deadline and orphans.
func (ss *session) sweep() {
	ss.Sweep(ss.ctx, func(ctx context.Context, todo []orphan) ([]orphan, func()) {
		var failed []orphan
		for _, o := range todo {
			if !ss.settle(ctx, o) {
				failed = append(failed, o)
			}
		}
		return failed, nil
	})
}

// settle unlocks o's entry if it is still o's, and reports whether o is
// settled (unlocked, or no longer ours to unlock).
func (ss *session) settle(ctx context.Context, o orphan) bool {
	if o.index != 0 {
		_, err := ss.unlock(ctx, o.name, o.index, ss.id, o.value)
		return err == nil
	}
	if ss.Acquiring(o.name) {
		return false
	}
	kv, _, err := ss.st.cli.KV().Get(o.name, (&api.QueryOptions{}).WithContext(ctx))
	if err != nil {
		return false
	}
	mine := false
	if kv != nil && kv.Session == ss.id {
		v, ok := decodeEntry(kv)
		_, kept := ss.keeps(o.name, o.tag, v.Token)
		mine = ok && v.Owner == o.tag && !kept
	}
	if !mine {
		// Not there (yet): the abandoned request may still land; look
		// again until o.until.
		return !time.Now().Before(o.until)
	}
	if ss.Acquiring(o.name) {
		return false
	}
	_, err = ss.unlock(ctx, o.name, kv.ModifyIndex, ss.id, kv.Value)
	return err == nil
}

// unlock releases name, locked by session sid, if its ModifyIndex is still
// index, in one transaction:
//
//	[check-index name index, unlock name sid value]
//
// Consul's unlock writes the value it is given (an empty one would erase
// the token the next grant must exceed), so it writes back value, the
// entry's, with Flags. ok reports that Consul unlocked it; a nil error with
// ok false means the entry has changed since (it is no longer that grant's).
func (ss *session) unlock(ctx context.Context, name string, index uint64, sid string, value []byte) (ok bool, err error) {
	return unlockTxn(ctx, ss.st.cli, name, index, sid, value)
}

// unlockTxn is session.unlock for any session.
func unlockTxn(ctx context.Context, cli *api.Client, name string, index uint64, sid string, value []byte) (bool, error) {
	ok, resp, _, err := cli.Txn().Txn(api.TxnOps{
		{KV: &api.KVTxnOp{Verb: api.KVCheckIndex, Key: name, Index: index}},
		{KV: &api.KVTxnOp{Verb: api.KVUnlock, Key: name, Session: sid, Value: value, Flags: Flags}},
	}, (&api.QueryOptions{}).WithContext(ctx))
	switch {
	case err != nil:
		return false, err
	case ok:
		return true, nil
	case txnSays(resp.Errors, "index check"), txnSays(resp.Errors, "doesn't exist"), txnSays(resp.Errors, "failed to unlock"):
		return false, nil
	}
	return false, txnError(resp.Errors)
}
