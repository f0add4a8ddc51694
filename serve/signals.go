package serve

import (
	"context"
	"sync"

	"github.com/leasehold-go/leasehold"
)

// signals returns a channel that receives a value (non-blocking, coalesced)
// whenever key may have changed: a release through this server, and the
// backend's own signal. With changes set it uses the backend's Watcher
// (every change of the holder), else its Notifier (the key may be free),
// falling back to the Watcher. It returns once the backend's subscription
// is established, so nothing after it is missed; stop ends it. With
// changes, the channel is closed when the backend's watch cannot be
// started again.
func (s *Server) signals(ctx context.Context, key string, changes bool) (<-chan struct{}, func(), error) {
	ctx, cancel := context.WithCancel(ctx)
	local, unsub := s.local.subscribe(key)
	open := s.backendSource(key, changes)
	var backend <-chan struct{}
	stopBackend := func() {}
	if open != nil {
		ch, stop, err := open(ctx)
		if err != nil {
			unsub()
			cancel()
			return nil, nil, err
		}
		backend, stopBackend = ch, stop
	}
	out := make(chan struct{}, 1)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer func() { stopBackend() }()
		for {
			select {
			case <-ctx.Done():
				return
			case <-local:
			case <-backend:
				if changes {
					// A watch may end after any signal: start a new one
					// before passing the signal on, so nothing is missed.
					// If it cannot be started, out is closed: the stream
					// ends, and its client reads the holder and watches
					// again.
					stopBackend()
					backend, stopBackend = nil, func() {}
					ch, stop, err := open(ctx)
					if err != nil {
						close(out)
						return
					}
					backend, stopBackend = ch, stop
				}
			}
			select {
			case out <- struct{}{}:
			default:
			}
		}
	}()
	return out, func() { cancel(); wg.Wait(); unsub() }, nil
}

// backendSource returns how to subscribe to the backend's signals about
// key, or nil when it has none.
func (s *Server) backendSource(key string, changes bool) func(context.Context) (<-chan struct{}, func(), error) {
	w, isWatcher := s.store.(leasehold.Watcher)
	n, isNotifier := s.store.(leasehold.Notifier)
	switch {
	case isNotifier && !changes:
		return func(ctx context.Context) (<-chan struct{}, func(), error) { return n.Subscribe(ctx, key) }
	case isWatcher:
		return func(ctx context.Context) (<-chan struct{}, func(), error) { return w.Watch(ctx, key) }
	}
	return nil
}
