package consul

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/hashicorp/consul/api"
	"github.com/leasehold-go/leasehold"
)

// Holder reports the current holder of key: the label and token of a
// leasehold grant, or a description of a session that is not leasehold's.
// Remaining is known only for grants this Store keeps (their deadline by
// its clock); Consul does not tell a session's time left, so for others
// MaxRemaining bounds it: twice the session's TTL, plus its lock-delay.
func (s *Store) Holder(ctx context.Context, key string) (leasehold.Holder, error) {
	if err := s.sessions.Enter(ctx, "holder", leasehold.CheckHolder(key)); err != nil {
		return leasehold.Holder{}, err
	}
	kv, _, err := s.cli.KV().Get(s.KeyOf(key), (&api.QueryOptions{}).WithContext(ctx))
	if err != nil {
		return leasehold.Holder{}, storeErr(ctx, "holder", key, err)
	}
	if kv == nil || kv.Session == "" {
		return leasehold.Holder{}, notHeld("holder", key, "")
	}
	return s.holderOf(key, kv), nil
}

// holderOf describes the holder of key's entry kv, which a session locks.
func (s *Store) holderOf(key string, kv *api.KVPair) leasehold.Holder {
	v, ok := decodeEntry(kv)
	if !ok {
		return leasehold.Holder{Key: key, Label: foreignHolder(kv)}
	}
	h := leasehold.Holder{Key: key, Label: v.Label, Token: v.Token, Remaining: s.remaining(kv.Key, v.Owner, v.Token)}
	if h.Remaining == 0 && v.SessionTTLMS > 0 {
		// Consul invalidates the session no later than twice its TTL
		// after its last renewal, which is no later than now; the
		// lock-delay keeps the key from others after that.
		h.MaxRemaining = time.Duration(2*v.SessionTTLMS+v.LockDelayMS) * time.Millisecond
	}
	return h
}

// remaining returns the time left on a grant this Store keeps, or 0.
func (s *Store) remaining(name, tag string, token uint64) time.Duration {
	var left time.Duration
	s.sessions.Find(func(ss *session) bool {
		d, ok := ss.Remaining(name, is(tag, token))
		left = d
		return ok
	})
	return left
}

// List reports the current holders of keys starting with prefix, in key
// order, in one read of the entries under the store's prefix.
func (s *Store) List(ctx context.Context, prefix string) ([]leasehold.Holder, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if s.sessions.Closed() {
		return nil, s.closedErr("list")
	}
	kvs, _, err := s.cli.KV().List(s.prefix+escapeKey(prefix), (&api.QueryOptions{}).WithContext(ctx))
	if err != nil {
		return nil, storeErr(ctx, "list", prefix, err)
	}
	var hs []leasehold.Holder
	for _, kv := range kvs {
		if kv.Session == "" {
			continue
		}
		key, ok := unescapeKey(strings.TrimPrefix(kv.Key, s.prefix))
		if !ok || !strings.HasPrefix(key, prefix) {
			continue
		}
		hs = append(hs, s.holderOf(key, kv))
	}
	slices.SortFunc(hs, func(a, b leasehold.Holder) int { return strings.Compare(a.Key, b.Key) })
	return hs, nil
}
