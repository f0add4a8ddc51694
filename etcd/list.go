package etcd

import (
	"context"
	"strings"
	"time"

	"github.com/leasehold-go/leasehold"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// List reports the current holders of keys starting with prefix, in key
// order, in one range read (plus one TimeToLive per distinct session lease
// for Remaining).
func (s *Store) List(ctx context.Context, prefix string) ([]leasehold.Holder, error) {
	if s.isClosed() {
		return nil, s.closedErr("list")
	}
	resp, err := s.cli.Get(clientv3.WithRequireLeader(ctx), s.prefix+escapeKey(prefix), clientv3.WithPrefix())
	if err != nil {
		return nil, s.storeErrOn(ctx, "list", err)
	}
	var hs []leasehold.Holder
	ttls := map[int64]time.Duration{}
	for _, kv := range resp.Kvs {
		rest, ok := strings.CutSuffix(strings.TrimPrefix(string(kv.Key), s.prefix), holderSuffix)
		if !ok || strings.Contains(rest, "/") {
			continue // a waiter key, or not ours
		}
		key, ok := unescapeKey(rest)
		if !ok {
			continue
		}
		h := leasehold.Holder{Key: key, Label: decodeLabel(kv.Value), Token: uint64(kv.CreateRevision)}
		if kv.Lease != 0 {
			rem, seen := ttls[kv.Lease]
			if !seen {
				if t, err := s.cli.TimeToLive(ctx, clientv3.LeaseID(kv.Lease)); err == nil && t.TTL > 0 {
					rem = time.Duration(t.TTL) * time.Second
				}
				ttls[kv.Lease] = rem
			}
			h.Remaining = rem
		}
		hs = append(hs, h)
	}
	return hs, nil
}
