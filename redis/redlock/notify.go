package redlock

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/leasehold-go/leasehold"
)

// Subscribe returns a channel that receives a value when key is released
// on any master (a release publishes on each), or when a master's pub/sub
// connection is lost. Masters that cannot be subscribed to are skipped; it
// fails only when none can.
func (s *Store) Subscribe(ctx context.Context, key string) (<-chan struct{}, func(), error) {
	if err := leasehold.CheckHolder(key); err != nil {
		return nil, nil, err
	}
	if err := s.check(ctx, "subscribe"); err != nil {
		return nil, nil, err
	}
	ch := make(chan struct{}, 1)
	var (
		mu      sync.Mutex
		cancels []func()
		errs    nodeErrors
	)
	s.each(ctx, s.nodeTimeout(10*time.Second), func(nctx context.Context, i int) {
		cancel, err := s.notify[i].Subscribe(nctx, s.nodes[i].Names.Channel(key), ch)
		mu.Lock()
		defer mu.Unlock()
		if err != nil {
			errs.add(s, i, err)
			return
		}
		cancels = append(cancels, cancel)
	})
	if len(cancels) == 0 {
		if err := ctx.Err(); err != nil {
			return nil, nil, err
		}
		return nil, nil, &leasehold.StoreError{Store: Name, Op: "subscribe", Err: fmt.Errorf("key %q: no master: %s", key, errs)}
	}
	var once sync.Once
	return ch, func() {
		once.Do(func() {
			for _, c := range cancels {
				c()
			}
		})
	}, nil
}

// closeGrace is how long Close waits for requests still in flight: the
// answers of masters slower than the majority, and clean-ups.
const closeGrace = time.Second

// Close closes the store's pub/sub connections, and the clients when the
// store owns them. It first waits up to a second for the requests still in
// flight (the answers of masters slower than the majority, the clean-ups of
// failed acquires), then abandons them. Leases are not released; their TTLs
// end them.
func (s *Store) Close() error {
	s.mu.Lock()
	was := s.closed.Swap(true)
	s.mu.Unlock()
	if was {
		return nil
	}
	s.settle()
	var errs []error
	for _, n := range s.notify {
		if err := n.Close(); err != nil {
			errs = append(errs, err)
		}
	}
	if s.opts.CloseClients {
		for _, c := range s.clients {
			if err := c.Close(); err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", c.Addr(), err))
			}
		}
	}
	if err := errors.Join(errs...); err != nil {
		return &leasehold.StoreError{Store: Name, Op: "close", Err: err}
	}
	return nil
}

// settle waits up to closeGrace for the requests in flight, then ends
// them (their context is bg), and the pools' goroutines with them.
func (s *Store) settle() {
	done := make(chan struct{})
	go func() {
		s.inflight.Wait()
		close(done)
	}()
	t := time.NewTimer(closeGrace)
	select {
	case <-done:
	case <-t.C:
	}
	t.Stop()
	s.stop()
	<-done
	s.workers.Wait()
}
