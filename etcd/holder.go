package etcd

import (
	"context"

	"github.com/leasehold-go/leasehold"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// Holder reports the current holder of key. Remaining is the time left on
// the holder's etcd session lease (one more round trip), whole seconds; the
// holder's store deletes the key sooner if the holder stops renewing.
func (s *Store) Holder(ctx context.Context, key string) (leasehold.Holder, error) {
	if err := s.sessions.Enter(ctx, "holder", leasehold.CheckHolder(key)); err != nil {
		return leasehold.Holder{}, err
	}
	resp, err := s.cli.Get(clientv3.WithRequireLeader(ctx), QueuePrefix(s.prefix, key), clientv3.WithFirstCreate()...)
	if err != nil {
		return leasehold.Holder{}, s.storeErrOn(ctx, "holder", err)
	}
	if len(resp.Kvs) == 0 {
		return leasehold.Holder{}, notHeld("holder", key, "")
	}
	kv := resp.Kvs[0]
	tok, label, err := checkEntry(QueuePrefix(s.prefix, key), kv, false)
	if err != nil {
		return leasehold.Holder{}, refused("holder", err)
	}
	h := leasehold.Holder{Key: key, Label: label, Token: tok}
	if ttl, err := s.cli.TimeToLive(ctx, clientv3.LeaseID(kv.Lease)); err == nil {
		h.Remaining = leaseTTL(ttl.TTL)
	}
	return h, nil
}
