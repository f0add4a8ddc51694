package serve

import (
	"slices"
	"strings"
	"sync"
)

// broker signals the watchers of a key when a grant of it is released
// through this server (or by its sweeper), so that a backend without
// notifications still wakes the waiters that wait through this server;
// and it passes every key that changed through this server (a grant or a
// release) to the watchers of a prefix of it.
type broker struct {
	mu       sync.Mutex
	subs     map[string]map[chan struct{}]struct{}
	prefixes map[*keySink]struct{}
}

func newBroker() *broker {
	return &broker{subs: make(map[string]map[chan struct{}]struct{}), prefixes: make(map[*keySink]struct{})}
}

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

// subscribePrefix returns a sink that collects the keys under prefix that
// change through this server (at most max of them between two takes),
// and the function that ends the subscription.
func (b *broker) subscribePrefix(prefix string, max int) (*keySink, func()) {
	k := &keySink{prefix: prefix, max: max, keys: make(map[string]struct{}), wake: make(chan struct{}, 1)}
	b.mu.Lock()
	b.prefixes[k] = struct{}{}
	b.mu.Unlock()
	return k, func() {
		b.mu.Lock()
		delete(b.prefixes, k)
		b.mu.Unlock()
	}
}

// signal wakes the subscribers of key, and passes key to the watchers of
// its prefixes: key may be free.
func (b *broker) signal(key string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for ch := range b.subs[key] {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
	b.touchLocked(key, nil)
}

// touched passes key to the watchers of its prefixes: its holder changed
// (a grant), but it is not free.
func (b *broker) touched(key string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.touchLocked(key, nil)
}

// touchedUnder passes key to the watchers of exactly prefix (a change the
// prefix's poller found).
func (b *broker) touchedUnder(prefix, key string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.touchLocked(key, &prefix)
}

func (b *broker) touchLocked(key string, only *string) {
	for k := range b.prefixes {
		if strings.HasPrefix(key, k.prefix) && (only == nil || *only == k.prefix) {
			k.add(key)
		}
	}
}

// keySink collects the keys that changed under one watch stream's prefix:
// a set of at most max keys, so that a stream that does not keep up costs
// bounded memory; past max it forgets them and says so (overflow), and
// the stream tells its client to list again.
type keySink struct {
	prefix   string
	max      int
	mu       sync.Mutex
	keys     map[string]struct{}
	overflow bool
	wake     chan struct{} // a value (coalesced) when keys were added
}

func (k *keySink) add(key string) {
	k.mu.Lock()
	switch {
	case k.overflow:
	case len(k.keys) >= k.max:
		clear(k.keys)
		k.overflow = true
	default:
		k.keys[key] = struct{}{}
	}
	k.mu.Unlock()
	select {
	case k.wake <- struct{}{}:
	default:
	}
}

// take returns and forgets the keys collected (sorted), and whether some
// were forgotten since the last take.
func (k *keySink) take() ([]string, bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	keys := make([]string, 0, len(k.keys))
	for key := range k.keys {
		keys = append(keys, key)
	}
	clear(k.keys)
	over := k.overflow
	k.overflow = false
	slices.Sort(keys)
	return keys, over
}
