package etcd

import (
	"context"
	"errors"
	"time"

	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/internal/sessionpool"
	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// errLeaseGone: the session's etcd lease vanished under an acquire.
var errLeaseGone = errors.New("session lease gone")

// Acquire claims req.Key in one transaction:
//
//	If(no entry in the key's queue)
//	Then(Put(<queue>/<session lease>-<slot>, {owner hash, label}, session lease))
//	Else(Get(the queue's oldest entry))
//
// The token is the new entry's CreateRevision, a cluster-wide revision that
// only grows, also across leader failover. The first acquire of a TTL class
// also grants the class's session lease (one more round trip). When the key
// is held, the *HeldError carries the holder's label and token and a
// Remaining of 0: the holder's time left would take another round trip.
// Acquire never jumps the queue of AcquireWait callers.
func (s *Store) Acquire(ctx context.Context, req leasehold.AcquireRequest) (leasehold.Grant, error) {
	if err := leasehold.CheckAcquire(req, s.Info()); err != nil {
		return leasehold.Grant{}, err
	}
	return s.onSession(ctx, req, s.acquireOn)
}

// onSession runs op on the session of req's TTL class, once more on a fresh
// session if the first one's etcd lease expired under it.
func (s *Store) onSession(ctx context.Context, req leasehold.AcquireRequest, op func(context.Context, *session, leasehold.AcquireRequest) (leasehold.Grant, error)) (leasehold.Grant, error) {
	if err := ctx.Err(); err != nil {
		return leasehold.Grant{}, err
	}
	return sessionpool.OnSession(ctx, s.sessions, classOf(req.TTL),
		func(ss *session) (leasehold.Grant, error) { return op(ctx, ss, req) },
		errLeaseGone, func(error) error { return &leasehold.StoreError{Store: Name, Op: "acquire", Err: ErrSessionLost} }, nil)
}

func (s *Store) acquireOn(ctx context.Context, ss *session, req leasehold.AcquireRequest) (leasehold.Grant, error) {
	qpfx := QueuePrefix(s.prefix, req.Key)
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

	resp, err := s.cli.Txn(clientv3.WithRequireLeader(ctx)).
		If(clientv3.Compare(clientv3.CreateRevision(qpfx), "=", 0).WithPrefix()).
		Then(clientv3.OpPut(e.name, encodeValue(e.owner, req.Label), clientv3.WithLease(ss.id))).
		Else(clientv3.OpGet(qpfx, clientv3.WithFirstCreate()...)).
		Commit()
	if err != nil {
		keep = true
		return leasehold.Grant{}, s.acquireFailed(ctx, ss, e, err)
	}
	if !resp.Succeeded {
		return leasehold.Grant{}, heldError(req.Key, qpfx, resp.Responses[0].GetResponseRange().GetKvs())
	}
	g, err := s.granted(ss, req, e, resp.Header.Revision, t0)
	keep = err == nil
	return g, err
}

// claim claims a slot of req.Key's queue on ss for req's owner (see
// session.claim); the caller ends the claim with ss.finish. An owner that
// already holds or waits for the key on ss gets a *HeldError naming the
// holder.
func (s *Store) claim(ctx context.Context, ss *session, req leasehold.AcquireRequest) (entry, error) {
	e, dup, err := ss.claim(req.Key, ownerHash(req.Owner))
	if err != nil || !dup {
		return e, err
	}
	resp, err := s.cli.Get(clientv3.WithRequireLeader(ctx), QueuePrefix(s.prefix, req.Key), clientv3.WithFirstCreate()...)
	if err != nil {
		return entry{}, s.storeErrOn(ctx, "acquire", err)
	}
	return entry{}, heldError(req.Key, QueuePrefix(s.prefix, req.Key), resp.Kvs)
}

// acquireFailed is the error of an acquire transaction that put e on ss's
// lease and got err instead of a reply.
func (s *Store) acquireFailed(ctx context.Context, ss *session, e entry, err error) error {
	if isLeaseNotFound(err) {
		ss.markLost()
		return errLeaseGone
	}
	// The put may have been applied with its reply lost: have housekeeping
	// delete it if it turns out to be there, the owner's and untracked.
	ss.AddOrphan(orphan{entry: e})
	return s.storeErrOn(ctx, "acquire", err)
}

// heldError is the *HeldError describing the holder of key from a range of
// its queue's oldest entry (the queue's prefix is qpfx), or, if that entry
// is not one leasehold writes, the error refusing it: a planted key would
// otherwise be reported as a holder that never leaves.
func heldError(key, qpfx string, kvs []*mvccpb.KeyValue) error {
	h := &leasehold.HeldError{Key: key}
	if len(kvs) > 0 {
		tok, label, err := checkEntry(qpfx, kvs[0], false)
		if err != nil {
			return refused("acquire", err)
		}
		h.Label, h.Token = label, tok
	}
	return h
}

// granted records a grant of e won at revision rev by a request sent at t0.
func (s *Store) granted(ss *session, req leasehold.AcquireRequest, e entry, rev int64, t0 time.Time) (leasehold.Grant, error) {
	token, err := tokenOf(e.name, rev)
	if err != nil {
		_ = s.deleteToken(e.name, rev) // best effort
		return leasehold.Grant{}, refused("acquire", err)
	}
	rec, ttl, ok := ss.track(e, rev, t0)
	if !ok {
		// The session was lost while the request was in flight: its lease
		// is gone or being revoked, and the key with it. No grant.
		_ = s.deleteToken(e.name, rev) // best effort
		return leasehold.Grant{}, &leasehold.StoreError{Store: Name, Op: "acquire", Err: ErrSessionLost}
	}
	return leasehold.Grant{
		Key: req.Key, Owner: req.Owner, Label: req.Label,
		Token:   token,
		TTL:     ttl,
		Lost:    ss.Done(),
		Private: rec,
	}, nil
}

// deleteToken deletes name if its CreateRevision is token, on a short
// detached context.
func (s *Store) deleteToken(name string, token int64) error {
	ctx, cancel := context.WithTimeout(s.sessions.Ctx(), 2*time.Second)
	defer cancel()
	_, err := s.cli.Txn(ctx).
		If(clientv3.Compare(clientv3.CreateRevision(name), "=", token)).
		Then(clientv3.OpDelete(name)).Commit()
	return err
}
