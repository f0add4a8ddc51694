package consul

import (
	"context"
	"time"

	"github.com/hashicorp/consul/api"
	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/internal/sessionpool"
)

// Subscribe follows key's entry with Consul blocking queries and signals the
// returned channel whenever the entry changes and no session holds it (a
// release, an expiry's unlock, an invalidated session): the key may have
// become free. It returns after a first read, whose index the blocking
// queries start from, so a release after Subscribe returns is never missed.
// The channel is also signalled when a blocking query fails and when the
// subscription ends (Close); the client's backoff covers those.
func (s *Store) Subscribe(ctx context.Context, key string) (<-chan struct{}, func(), error) {
	return s.follow(ctx, key, "subscribe", true)
}

// Watch implements leasehold.Watcher: like Subscribe, but it signals every
// change of key's entry (a grant, a release, an expiry), so that an
// observer of the key's holder never misses one.
func (s *Store) Watch(ctx context.Context, key string) (<-chan struct{}, func(), error) {
	return s.follow(ctx, key, "watch", false)
}

// follow reads key's entry, then follows it with blocking queries on a
// goroutine counted in the sessions pool, signalling each change (only those that leave
// the entry unlocked, if freeOnly).
func (s *Store) follow(ctx context.Context, key, op string, freeOnly bool) (<-chan struct{}, func(), error) {
	if err := leasehold.CheckHolder(key); err != nil {
		return nil, nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	name := s.KeyOf(key)
	_, meta, err := s.cli.KV().Get(name, (&api.QueryOptions{}).WithContext(ctx))
	if err != nil {
		return nil, nil, storeErr(ctx, op, key, err)
	}
	wctx, cancel, err := s.sessions.WatchContext(ctx, op)
	if err != nil {
		return nil, nil, err
	}
	ch, stop := s.sessions.Follow(cancel, func(ch chan struct{}) { s.blockOn(wctx, name, meta.LastIndex, freeOnly, ch) })
	return ch, stop, nil
}

// blockOn runs blocking queries on name from index until ctx ends.
func (s *Store) blockOn(ctx context.Context, name string, index uint64, freeOnly bool, ch chan struct{}) {
	pause := 50 * time.Millisecond
	for ctx.Err() == nil {
		q := &api.QueryOptions{WaitIndex: index, WaitTime: watchWait}
		kv, meta, err := s.cli.KV().Get(name, q.WithContext(ctx))
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			sessionpool.Signal(ch)
			select {
			case <-ctx.Done():
				return
			case <-time.After(pause):
			}
			pause = min(2*pause, time.Second)
			continue
		}
		pause = 50 * time.Millisecond
		if meta.LastIndex == index {
			continue // the wait timed out with no change
		}
		index = nextIndex(index, meta.LastIndex)
		if !freeOnly || kv == nil || kv.Session == "" {
			sessionpool.Signal(ch)
		}
	}
}
