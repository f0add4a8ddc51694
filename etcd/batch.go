package etcd

import (
	"context"
	"sync"
	"time"

	"github.com/leasehold-go/leasehold"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// RenewMany renews many grants, checking up to 64 of them in one etcd
// transaction (up to 8 transactions at a time): each grant is a nested
// transaction comparing its entry's CreateRevision and owner, so one stale
// grant does not fail the others.
// A grant that leasehold.CheckRenew refuses gets that error. Grants not made
// by this Store value are renewed one by one, as Renew does.
// err is set only when every grant failed for the same reason (the store
// is closed, or the first transaction could not be sent).
func (s *Store) RenewMany(ctx context.Context, gs []leasehold.Grant) ([]leasehold.RenewResult, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if s.sessions.Closed() {
		return nil, s.closedErr("renew")
	}
	out := make([]leasehold.RenewResult, len(gs))
	t0 := time.Now()
	freshErr := map[*session]error{} // sessions checked by fresh, and the outcome
	var batch []int                  // indexes of grants checked in a transaction
	for i, g := range gs {
		if err := leasehold.CheckRenew(g, s.Info()); err != nil {
			out[i].Err = err
			continue
		}
		r := s.ref(g)
		if r == nil {
			out[i].Grant, out[i].Err = s.renewForeign(ctx, g)
			continue
		}
		ss := r.sess
		if out[i].Err = ss.checkTracked(r.entry.name, g.Key, ownerHash(g.Owner), int64(g.Token)); out[i].Err != nil {
			continue
		}
		err, seen := freshErr[ss]
		if !seen {
			_, err = ss.fresh(ctx, "renew")
			freshErr[ss] = err
		}
		if err != nil {
			out[i].Err = err
			continue
		}
		batch = append(batch, i)
	}
	if len(batch) == len(gs) && len(batch) <= maxBatch {
		if err := s.renewChunk(ctx, gs, batch, out, t0); err != nil {
			return nil, err // the only transaction failed: the whole batch did
		}
		return out, nil
	}
	// Chunks go out concurrently, a few at a time.
	var wg sync.WaitGroup
	sem := make(chan struct{}, renewParallelism)
	for len(batch) > 0 {
		n := min(len(batch), maxBatch)
		idx := batch[:n]
		batch = batch[n:]
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			if err := s.renewChunk(ctx, gs, idx, out, t0); err != nil {
				for _, i := range idx {
					out[i].Err = err
				}
			}
		})
	}
	wg.Wait()
	return out, nil
}

// renewParallelism bounds the concurrent transactions of one RenewMany.
const renewParallelism = 8

// renewChunk checks gs[i] for i in idx in one transaction and fills out[i].
// It returns the transaction's error, leaving out untouched, if it failed.
// A transaction of nested transactions is not a read for etcd: it goes
// through raft, so its compares see every grant committed before it (a
// compare-only transaction would not; see linearizable).
func (s *Store) renewChunk(ctx context.Context, gs []leasehold.Grant, idx []int, out []leasehold.RenewResult, t0 time.Time) error {
	ops := make([]clientv3.Op, len(idx))
	hs := make([]ownerID, len(idx)) // owner hashes
	for j, i := range idx {
		hs[j] = ownerHash(gs[i].Owner)
		ops[j] = clientv3.OpTxn(s.grantCmps(gs[i], s.ref(gs[i]).entry.name, hs[j], int64(gs[i].Token)), nil, nil)
	}
	resp, err := s.cli.Txn(clientv3.WithRequireLeader(ctx)).Then(ops...).Commit()
	if err != nil {
		return s.storeErrOn(ctx, "renew", err)
	}
	for j, i := range idx {
		g := gs[i]
		r := s.ref(g)
		ss, name, tok := r.sess, r.entry.name, int64(g.Token)
		if !resp.Responses[j].GetResponseTxn().GetSucceeded() {
			ss.untrack(name, g.Key, hs[j], tok)
			out[i].Err = notHeld("renew", g.Key, "")
			continue
		}
		ttl, err := ss.renewedTTL(name, g.Key, hs[j], tok, t0)
		if err != nil {
			out[i].Err = err
			continue
		}
		g.TTL = ttl
		out[i].Grant = g
	}
	return nil
}
