package consul

import (
	"context"
	"time"

	"github.com/hashicorp/consul/api"
	"github.com/leasehold-go/leasehold/internal/sessionpool"
)

// sweepPeriod is how often housekeeping looks for expired grants.
func (ss *session) sweepPeriod() time.Duration { return sessionpool.SweepPeriod(ss.class) }

// housekeep unlocks expired grants and orphans, and tears the session down
// when it has been idle for the store's idle timeout.
func (ss *session) housekeep() {
	defer ss.st.wg.Done()
	sessionpool.Housekeep(ss.stop, ss.kick, ss.sweepPeriod(), func() bool {
		ss.sweep()
		return ss.maybeTeardown()
	})
}

// sweep moves grants past their deadline to the orphans and unlocks orphans.
func (ss *session) sweep() {
	now := time.Now()
	ss.mu.Lock()
	for name, g := range ss.grants {
		if now.After(g.deadline) {
			delete(ss.grants, name)
			ss.orphans = append(ss.orphans, orphan{name: name, tag: g.tag, index: g.index, value: g.value})
			ss.lastUse = now
		}
	}
	todo := ss.orphans
	ss.orphans = nil
	ss.mu.Unlock()
	if len(todo) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(ss.ctx, max(ss.sweepPeriod(), time.Second))
	defer cancel()
	var failed []orphan
	for _, o := range todo {
		if !ss.settle(ctx, o) {
			failed = append(failed, o)
		}
	}
	if len(failed) > 0 {
		ss.mu.Lock()
		if !ss.gone {
			ss.orphans = append(ss.orphans, failed...)
		}
		ss.mu.Unlock()
	}
}

// settle unlocks o's entry if it is still o's, and reports whether o is
// settled (unlocked, or no longer ours to unlock).
func (ss *session) settle(ctx context.Context, o orphan) bool {
	if o.index != 0 {
		_, err := ss.unlock(ctx, o.name, o.index, ss.id, o.value)
		return err == nil
	}
	if ss.acquiring(o.name) {
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
	if ss.acquiring(o.name) {
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

// acquiring reports whether an acquire of name is in progress.
func (ss *session) acquiring(name string) bool {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return ss.inflight[name] > 0
}

// keeps reports whether the session keeps a live grant of name with tag and
// token, and returns a copy of it.
func (ss *session) keeps(name, tag string, token uint64) (rec grantRec, ok bool) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	g := ss.grants[name]
	if g != nil && g.tag == tag && g.token == token {
		return *g, true
	}
	return grantRec{}, false
}

// maybeTeardown destroys the session if it has had no grants, acquires or
// pending work for the idle timeout.
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
	ss.destroy(ss.st.ctx)
	return true
}
