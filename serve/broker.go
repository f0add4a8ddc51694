package serve

import "sync"

// broker signals the watchers of a key when a grant of it is released
// through this server (or by its sweeper), so that a backend without
// notifications still wakes the waiters that wait through this server.
type broker struct {
	mu   sync.Mutex
	subs map[string]map[chan struct{}]struct{}
}

func newBroker() *broker { return &broker{subs: make(map[string]map[chan struct{}]struct{})} }

// subscribe returns a channel that receives a value (coalesced) on each
// signal of key, and the function that ends the subscription.
func (b *broker) subscribe(key string) (<-chan struct{}, func()) {
	ch := make(chan struct{}, 1)
	b.mu.Lock()
	if b.subs[key] == nil {
		b.subs[key] = make(map[chan struct{}]struct{})
	}
	b.subs[key][ch] = struct{}{}
	b.mu.Unlock()
	return ch, func() {
		b.mu.Lock()
		delete(b.subs[key], ch)
		if len(b.subs[key]) == 0 {
			delete(b.subs, key)
		}
		b.mu.Unlock()
	}
}

// signal wakes the subscribers of key.
func (b *broker) signal(key string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for ch := range b.subs[key] {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}
