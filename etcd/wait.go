package etcd

import (
	"context"
	"time"

	"github.com/leasehold-go/leasehold"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// AcquireWait acquires req.Key, waiting in a FIFO queue while it is held.
//
// One transaction puts the caller's entry in the key's queue (on the
// session's etcd lease) and reads the queue's oldest entry: if that is the
// new entry, the key is the caller's, in one round trip. Otherwise the
// caller waits for the entry created just before its own to be deleted (as
// etcd's concurrency.Mutex does), until no older entry remains: the entry
// then holds the key, and its CreateRevision is the token. Acquire never
// jumps the queue (it succeeds only on an empty queue), so waiting is FIFO.
//
// Watches are opened at the current revision and confirmed by a read, so
// etcd delivers the wake-up at once (a watch that starts at a past revision
// waits for etcd's 100 ms catch-up loop). A waiter whose context ends
// removes its entry (or has housekeeping remove it); a waiter whose process
// dies leaves the queue when its session lease expires. An owner id that
// already holds or waits for the key on this Store, with the same TTL (so
// on the same session), gets a *HeldError.
func (s *Store) AcquireWait(ctx context.Context, req leasehold.AcquireRequest) (leasehold.Grant, error) {
	if err := leasehold.CheckAcquire(req, s.Info()); err != nil {
		return leasehold.Grant{}, err
	}
	return s.onSession(ctx, req, s.acquireWaitOn)
}

func (s *Store) acquireWaitOn(ctx context.Context, ss *session, req leasehold.AcquireRequest) (leasehold.Grant, error) {
	t0, err := ss.fresh(ctx, "acquire")
	if err != nil {
		return leasehold.Grant{}, err
	}
	e, err := s.claim(ctx, ss, req)
	if err != nil {
		return leasehold.Grant{}, err
	}
	keep := false // the entry became a grant or an orphan
	defer func() { ss.finish(e, keep) }()
	rev, head, orphaned, err := s.joinQueue(ctx, ss, req, e)
	if err != nil {
		keep = orphaned
		return leasehold.Grant{}, err
	}
	if !head {
		if t0, err = s.awaitTurn(ctx, ss, req.Key, e.name, rev); err != nil {
			keep = s.leaveQueue(ss, e, rev)
			return leasehold.Grant{}, err
		}
	}
	g, err := s.granted(ss, req, e, rev, t0)
	keep = err == nil
	return g, err
}

// joinQueue puts e, the caller's entry, in req.Key's queue on the session's
// lease and reads the queue's oldest entry, in one round trip. It returns
// the entry's CreateRevision and whether it heads the queue; on an error,
// orphaned reports that the put may have been applied unseen and e was
// left to housekeeping.
func (s *Store) joinQueue(ctx context.Context, ss *session, req leasehold.AcquireRequest, e entry) (rev int64, head, orphaned bool, err error) {
	qpfx := QueuePrefix(s.prefix, req.Key)
	resp, err := s.cli.Txn(clientv3.WithRequireLeader(ctx)).
		If(clientv3.Compare(clientv3.CreateRevision(e.name), "=", 0)).
		Then(clientv3.OpPut(e.name, encodeValue(e.owner, req.Label), clientv3.WithLease(ss.id)),
			clientv3.OpGet(qpfx, append(clientv3.WithFirstCreate(), clientv3.WithKeysOnly())...)).
		Else(clientv3.OpGet(qpfx, clientv3.WithFirstCreate()...)).
		Commit()
	if err != nil {
		return 0, false, true, s.acquireFailed(ctx, ss, e, err)
	}
	if !resp.Succeeded {
		// The slot's name exists though the session had it free: a put
		// whose reply was lost landed after housekeeping looked for it.
		// Never use that slot again (the key goes with the session's lease).
		ss.retireSlot(e)
		return 0, false, false, heldError(req.Key, qpfx, resp.Responses[0].GetResponseRange().GetKvs())
	}
	rev = resp.Header.Revision
	kvs := resp.Responses[1].GetResponseRange().GetKvs()
	return rev, len(kvs) > 0 && kvs[0].CreateRevision == rev, false, nil
}

// awaitTurn waits until no entry older than name (created at rev) is left in
// key's queue: name then holds the key. It returns the send time of the read
// that showed it.
func (s *Store) awaitTurn(ctx context.Context, ss *session, key, name string, rev int64) (time.Time, error) {
	var w *watch // on the entry we wait for
	defer func() { w.stop() }()
	for {
		t0, err := ss.fresh(ctx, "acquire")
		if err != nil {
			return t0, err
		}
		pred, err := s.predecessor(ctx, ss, key, name, rev)
		if err != nil || pred == "" {
			return t0, err
		}
		if w == nil || w.key != pred {
			// Watch the new predecessor from now, then read again: a delete
			// between the read and the watch's start is seen by the read.
			w.stop()
			if w, err = s.watchDeletes(ctx, pred); err != nil {
				return t0, err
			}
			continue
		}
		if err := w.wait(ctx, ss); err != nil {
			return t0, err
		}
	}
}

// predecessor returns the entry of key's queue created just before name
// (created at rev) and still there, or "" if there is none. If name itself
// is gone, its lease expired or was revoked: the session is lost. A
// predecessor that is not an entry leasehold writes is refused (see
// checkEntry): waiting for it to leave could be waiting forever.
func (s *Store) predecessor(ctx context.Context, ss *session, key, name string, rev int64) (string, error) {
	qpfx := QueuePrefix(s.prefix, key)
	resp, err := s.cli.Txn(clientv3.WithRequireLeader(ctx)).Then(
		clientv3.OpGet(qpfx, append(clientv3.WithLastCreate(), clientv3.WithMaxCreateRev(rev-1))...),
		clientv3.OpGet(name, clientv3.WithKeysOnly()),
	).Commit()
	if err != nil {
		return "", s.storeErrOn(ctx, "acquire", err)
	}
	if mine := resp.Responses[1].GetResponseRange().GetKvs(); len(mine) == 0 || mine[0].CreateRevision != rev {
		ss.markLost()
		if s.sessions.Closed() {
			return "", s.closedErr("acquire")
		}
		return "", &leasehold.StoreError{Store: Name, Op: "acquire", Err: ErrSessionLost}
	}
	if before := resp.Responses[0].GetResponseRange().GetKvs(); len(before) > 0 {
		if _, _, err := checkEntry(qpfx, before[0], false); err != nil {
			return "", refused("acquire", err)
		}
		return string(before[0].Key), nil
	}
	return "", nil
}

// leaveQueue deletes e, a waiter's entry created at rev, or leaves it to
// housekeeping if that fails; it reports whether it did (e is an orphan).
func (s *Store) leaveQueue(ss *session, e entry, rev int64) (orphaned bool) {
	if err := s.deleteToken(e.name, rev); err != nil {
		ss.AddOrphan(orphan{entry: e, token: rev})
		return true
	}
	return false
}
