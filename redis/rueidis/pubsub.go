package rueidis

import (
	"context"
	"sync"

	"github.com/redis/rueidis"

	lhredis "github.com/leasehold-go/leasehold/redis"
)

// Listen takes a dedicated connection for pub/sub. On a cluster it uses
// one node: a PUBLISH reaches every node's subscribers.
func (a *client) Listen(ctx context.Context, deliver func(channel string)) (lhredis.Subscription, error) {
	c := a.c
	if a.cluster {
		for _, n := range a.c.Nodes() {
			c = n
			break
		}
	}
	dc, release := c.Dedicate()
	errs := dc.SetPubSubHooks(rueidis.PubSubHooks{
		OnMessage: func(m rueidis.PubSubMessage) { deliver(m.Channel) },
	})
	s := &subscription{dc: dc, release: release, done: make(chan struct{})}
	go func() {
		for range errs { // closed when the hooks will not be called again
		}
		close(s.done)
	}()
	// Connect now, so an unreachable server shows here.
	if err := dc.Do(ctx, dc.B().Ping().Build()).Error(); err != nil {
		_ = s.Close()
		return nil, err
	}
	return s, nil
}

type subscription struct {
	dc      rueidis.DedicatedClient
	release func()
	done    chan struct{}
	once    sync.Once
}

// Subscribe returns once the server confirmed: rueidis completes a
// SUBSCRIBE on its confirmation.
func (s *subscription) Subscribe(ctx context.Context, channel string) error {
	return s.dc.Do(ctx, s.dc.B().Subscribe().Channel(channel).Build()).Error()
}

func (s *subscription) Unsubscribe(ctx context.Context, channel string) error {
	return s.dc.Do(ctx, s.dc.B().Unsubscribe().Channel(channel).Build()).Error()
}

func (s *subscription) Done() <-chan struct{} { return s.done }

// Close drops the hooks (which closes Done) and closes the connection
// rather than return a subscribed connection to the pool.
func (s *subscription) Close() error {
	s.once.Do(func() {
		s.dc.SetPubSubHooks(rueidis.PubSubHooks{})
		s.dc.Close()
		s.release()
	})
	<-s.done
	return nil
}
