package etcd

import (
	"context"
	"sync"

	"github.com/leasehold-go/leasehold"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// Subscribe watches key's queue and signals the returned channel when an
// entry is deleted (a release, an expiry, or a waiter leaving the queue):
// the key may have become free. It returns once the watch is
// established on the server, so a release after Subscribe returns is never
// missed. The channel is also signalled if the watch ends (compaction,
// cluster trouble, Close); the client's backoff covers that.
func (s *Store) Subscribe(ctx context.Context, key string) (<-chan struct{}, func(), error) {
	if err := leasehold.CheckHolder(key); err != nil {
		return nil, nil, err
	}
	wctx, cancel, err := s.watchContext(ctx)
	if err != nil {
		return nil, nil, err
	}
	wch := s.cli.Watch(clientv3.WithRequireLeader(wctx), QueuePrefix(s.prefix, key),
		clientv3.WithPrefix(), clientv3.WithFilterPut(), clientv3.WithCreatedNotify())
	if err := awaitCreated(ctx, wch); err != nil {
		cancel()
		drain(wch)
		s.wg.Done()
		return nil, nil, s.storeErrOn(ctx, "subscribe", err)
	}
	ch := make(chan struct{}, 1)
	done := make(chan struct{})
	go func() {
		defer s.wg.Done()
		defer close(done)
		defer signal(ch)
		for resp := range wch {
			if len(resp.Events) > 0 || resp.Err() != nil {
				signal(ch)
			}
		}
	}()
	var once sync.Once
	return ch, func() {
		once.Do(func() {
			cancel()
			<-done
		})
	}, nil
}

func signal(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}
