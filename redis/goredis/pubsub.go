package goredis

import (
	"context"
	"errors"
	"sync"

	"github.com/redis/go-redis/v9"

	lhredis "github.com/leasehold-go/leasehold/redis"
)

// errSubscriptionLost: the pub/sub connection ended while a SUBSCRIBE
// waited for its confirmation.
var errSubscriptionLost = errors.New("pub/sub connection lost")

// Listen opens a pub/sub connection and reads it in one goroutine until the
// connection fails or is closed.
func (a *client) Listen(ctx context.Context, deliver func(channel string)) (lhredis.Subscription, error) {
	ps := a.c.Subscribe(ctx)
	// Connect now, so an unreachable server shows here; the PONG is read
	// (and ignored) by the loop.
	if err := ps.Ping(ctx); err != nil {
		_ = ps.Close()
		return nil, err
	}
	s := &subscription{ps: ps, done: make(chan struct{}), acks: make(map[string][]chan struct{})}
	go s.loop(deliver)
	return s, nil
}

type subscription struct {
	ps   *redis.PubSub
	done chan struct{}

	closeOnce sync.Once
	closeErr  error

	mu   sync.Mutex
	acks map[string][]chan struct{} // SUBSCRIBEs waiting for their confirmation
}

func (s *subscription) loop(deliver func(string)) {
	defer close(s.done)
	for {
		// Any error ends the loop: a broken connection loses messages, so
		// the store must learn of it (Done) rather than have the client
		// reconnect quietly.
		msg, err := s.ps.Receive(context.Background())
		if err != nil {
			return
		}
		switch m := msg.(type) {
		case *redis.Message:
			deliver(m.Channel)
		case *redis.Subscription:
			if m.Kind == "subscribe" {
				s.mu.Lock()
				for _, ch := range s.acks[m.Channel] {
					close(ch)
				}
				delete(s.acks, m.Channel)
				s.mu.Unlock()
			}
		}
	}
}

func (s *subscription) Subscribe(ctx context.Context, channel string) error {
	ack := make(chan struct{})
	s.mu.Lock()
	s.acks[channel] = append(s.acks[channel], ack)
	s.mu.Unlock()
	if err := s.ps.Subscribe(ctx, channel); err != nil {
		s.forget(channel, ack)
		return err
	}
	select {
	case <-ack:
		return nil
	case <-s.done:
		s.forget(channel, ack)
		return errSubscriptionLost
	case <-ctx.Done():
		s.forget(channel, ack)
		return ctx.Err()
	}
}

func (s *subscription) forget(channel string, ack chan struct{}) {
	s.mu.Lock()
	defer s.mu.Unlock()
	l := s.acks[channel]
	for i, c := range l {
		if c == ack {
			s.acks[channel] = append(l[:i:i], l[i+1:]...)
			break
		}
	}
	if len(s.acks[channel]) == 0 {
		delete(s.acks, channel)
	}
}

func (s *subscription) Unsubscribe(ctx context.Context, channel string) error {
	return s.ps.Unsubscribe(ctx, channel)
}

func (s *subscription) Done() <-chan struct{} { return s.done }

func (s *subscription) Close() error {
	s.closeOnce.Do(func() { s.closeErr = s.ps.Close() })
	<-s.done
	return s.closeErr
}
