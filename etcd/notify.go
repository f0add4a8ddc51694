package etcd

import (
	"context"

	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/internal/sessionpool"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// Subscribe watches key's queue and signals the returned channel when an
// entry is deleted (a release, an expiry, or a waiter leaving the queue):
// the key may have become free. It returns once the watch is
// established on the server, so a release after Subscribe returns is never
// missed. The channel is also signalled if the watch ends (compaction,
// cluster trouble, Close); the client's backoff covers that.
func (s *Store) Subscribe(ctx context.Context, key string) (<-chan struct{}, func(), error) {
	return s.signalOn(ctx, key, "subscribe", clientv3.WithFilterPut())
}

// Watch implements leasehold.Watcher: it watches key's queue and signals
// the returned channel on every change of it (a grant, a release, an
// expiry, a waiter joining or leaving the queue), so that an observer of
// the key's holder never misses one. Like Subscribe, it returns once the
// watch is established, and signals when the watch ends.
func (s *Store) Watch(ctx context.Context, key string) (<-chan struct{}, func(), error) {
	return s.signalOn(ctx, key, "watch")
}

// signalOn watches key's queue with opts and signals the returned channel
// on each batch of events and when the watch ends.
func (s *Store) signalOn(ctx context.Context, key, op string, opts ...clientv3.OpOption) (<-chan struct{}, func(), error) {
	if err := leasehold.CheckHolder(key); err != nil {
		return nil, nil, err
	}
	wctx, cancel, err := s.sessions.WatchContext(ctx, "watch")
	if err != nil {
		return nil, nil, err
	}
	wch := s.cli.Watch(clientv3.WithRequireLeader(wctx), QueuePrefix(s.prefix, key),
		append([]clientv3.OpOption{clientv3.WithPrefix(), clientv3.WithCreatedNotify()}, opts...)...)
	if err := awaitCreated(ctx, wch); err != nil {
		cancel()
		drain(wch)
		s.sessions.Done()
		return nil, nil, s.storeErrOn(ctx, op, err)
	}
	ch, stop := s.sessions.Follow(cancel, func(ch chan struct{}) {
		for resp := range wch {
			if len(resp.Events) > 0 || resp.Err() != nil {
				sessionpool.Signal(ch)
			}
		}
	})
	return ch, stop, nil
}
