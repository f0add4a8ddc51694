package redis

import (
	"context"
	"errors"

	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/redis/internal/core"
)

// Subscribe returns a channel that receives a value when key's lease is
// released (the release script publishes on the key's channel), or when the
// store's pub/sub connection is lost and a release may have been missed.
// It returns once the server has confirmed the subscription. Expiry sends
// nothing: waiters find an expired lease by their backoff.
//
// All the store's subscriptions share one pub/sub connection, opened on
// first use; a key's channel stays subscribed while it has waiters.
func (s *Store) Subscribe(ctx context.Context, key string) (<-chan struct{}, func(), error) {
	if err := leasehold.CheckHolder(key); err != nil {
		return nil, nil, err
	}
	if err := s.check(ctx, "subscribe"); err != nil {
		return nil, nil, err
	}
	ch := make(chan struct{}, 1)
	cancel, err := s.notify.Subscribe(ctx, s.node.Names.Channel(key), ch)
	if err != nil {
		if errors.Is(err, core.ErrClosed) {
			err = leasehold.ErrClosed
		}
		return nil, nil, s.fail(ctx, "subscribe", key, err)
	}
	return ch, cancel, nil
}
