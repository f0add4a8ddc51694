package dynamodb

import (
	"sync"
	"time"
)

// maxObserved bounds the keys whose held items a store remembers having
// seen. Forgetting one is safe: its waiter starts watching it again, so it
// waits longer, never less.
const maxObserved = 4096

// observations is what a clock-free store has seen of held items: per
// key, the version of the item it last read and when, by its own
// monotonic clock, it first read that version. Versions are random for
// every write, so a version seen again is the same write, unchanged.
type observations struct {
	mu   sync.Mutex
	seen map[string]sighting
}

type sighting struct {
	version string
	first   time.Time // monotonic: after the reply of the first read that saw version
}

func newObservations() *observations { return &observations{seen: map[string]sighting{}} }

// watched records that a read of key, whose reply came at at (taken after
// the reply, so that the write it shows came before), found version, and
// returns how long this store has seen that version unchanged: 0 the first
// time.
func (o *observations) watched(key, version string, at time.Time) time.Duration {
	o.mu.Lock()
	defer o.mu.Unlock()
	if s, ok := o.seen[key]; ok && s.version == version {
		return max(at.Sub(s.first), 0)
	}
	if len(o.seen) >= maxObserved {
		for k := range o.seen { // drop any one
			delete(o.seen, k)
			break
		}
	}
	o.seen[key] = sighting{version: version, first: at}
	return 0
}

// forget drops what the store saw of key (the item is free, gone, or the
// store wrote it).
func (o *observations) forget(key string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	delete(o.seen, key)
}

// freed is what a store remembers of the items its releases wrote: per
// key, the free item (its token and version), so that its next acquire of
// the key can write on that version at once, without reading first. A
// write on a version someone else has since changed is refused by its
// condition and the acquire reads as usual; forgetting one costs a read.
type freed struct {
	mu    sync.Mutex
	items map[string]item
}

func newFreed() *freed { return &freed{items: map[string]item{}} }

// put remembers it, the free item this store wrote for key.
func (f *freed) put(key string, it item) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.items[key]; !ok && len(f.items) >= maxObserved {
		for k := range f.items { // drop any one
			delete(f.items, k)
			break
		}
	}
	f.items[key] = it
}

// take returns and forgets the free item remembered for key, if any.
func (f *freed) take(key string) (*item, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	it, ok := f.items[key]
	if !ok {
		return nil, false
	}
	delete(f.items, key)
	return &it, true
}
