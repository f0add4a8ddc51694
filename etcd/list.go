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
	if s.sessions.Closed() {
		return nil, s.closedErr("list")
	}
	resp, err := s.cli.Get(clientv3.WithRequireLeader(ctx), s.prefix+escapeKey(prefix), clientv3.WithPrefix())
	if err != nil {
		return nil, s.storeErrOn(ctx, "list", err)
	}
	oldest, err := s.oldestOf(prefix, resp.Kvs)
	if err != nil {
		return nil, refused("list", err)
	}
	keys := slices.Sorted(maps.Keys(oldest))
	hs := make([]leasehold.Holder, 0, len(keys))
	ttls := map[int64]time.Duration{}
	for _, key := range keys {
		o := oldest[key]
		h := leasehold.Holder{Key: key, Label: o.label, Token: o.token}
		rem, seen := ttls[o.lease]
		if !seen {
			if t, err := s.cli.TimeToLive(ctx, clientv3.LeaseID(o.lease)); err == nil {
				rem = leaseTTL(t.TTL)
			}
			ttls[o.lease] = rem
		}
		h.Remaining = rem
		hs = append(hs, h)
	}
	return hs, nil
}

// listed is the oldest entry of a key's queue, as List reports it.
type listed struct {
	token uint64
	label string
	lease int64
}

// oldestOf returns the oldest entry of each queue among kvs (a range over
// the store's prefix followed by prefix's escaping) whose key starts with
// prefix. Names outside any queue are left alone; an entry in a queue that
// is not one leasehold writes is refused (see checkEntry).
func (s *Store) oldestOf(prefix string, kvs []*mvccpb.KeyValue) (map[string]listed, error) {
	oldest := map[string]listed{} // by key: its queue's oldest entry
	for _, kv := range kvs {
		esc, _, ok := strings.Cut(strings.TrimPrefix(string(kv.Key), s.prefix), queuePart)
		if !ok {
			continue
		}
		key, ok := unescapeKey(esc)
		if !ok || !strings.HasPrefix(key, prefix) {
			continue
		}
		tok, label, err := checkEntry(s.prefix+esc+queuePart, kv, false)
		if err != nil {
			return nil, err
		}
		if o, seen := oldest[key]; !seen || tok < o.token {
			oldest[key] = listed{token: tok, label: label, lease: kv.Lease}
		}
	}
	return oldest, nil
}
