package etcd

import (
	"context"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/leasehold-go/leasehold"
	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// List reports the current holders of keys starting with prefix, in key
// order, in one range read over their queues (plus one TimeToLive per
// distinct session lease, for Remaining).
func (s *Store) List(ctx context.Context, prefix string) ([]leasehold.Holder, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if s.isClosed() {
		return nil, s.closedErr("list")
	}
	resp, err := s.cli.Get(clientv3.WithRequireLeader(ctx), s.prefix+escapeKey(prefix), clientv3.WithPrefix())
	if err != nil {
		return nil, s.storeErrOn(ctx, "list", err)
	}
	oldest := map[string]*mvccpb.KeyValue{} // by key: its queue's oldest entry
	for _, kv := range resp.Kvs {
		esc, _, ok := strings.Cut(strings.TrimPrefix(string(kv.Key), s.prefix), queuePart)
		if !ok {
			continue
		}
		key, ok := unescapeKey(esc)
		if !ok || !strings.HasPrefix(key, prefix) {
			continue
		}
		if o := oldest[key]; o == nil || kv.CreateRevision < o.CreateRevision {
			oldest[key] = kv
		}
	}
	keys := slices.Sorted(maps.Keys(oldest))
	hs := make([]leasehold.Holder, 0, len(keys))
	ttls := map[int64]time.Duration{}
	for _, key := range keys {
		kv := oldest[key]
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
