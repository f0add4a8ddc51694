// Package bounded is a map of a bounded number of entries, for what a
// store remembers only to save a request: forgetting an entry must be
// safe (a miss takes the store's slower, checked path), so a full map
// forgets about half of its entries, any half, and goes on.
package bounded

import "sync"

// DefaultMax is the bound of a Map whose Max is zero.
const DefaultMax = 1024

// Map maps names to values of type V, at most Max of them. The zero value
// is ready to use; set Max before the first Put. It is safe for concurrent
// use.
type Map[V any] struct {
	// Max bounds the entries; zero or less means DefaultMax.
	Max int

	mu sync.Mutex
	m  map[string]V
}

// Put maps name to v, forgetting about half of the other entries first
// when the map is full.
func (b *Map[V]) Put(name string, v V) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.m == nil {
		b.m = map[string]V{}
	}
	limit := b.Max
	if limit <= 0 {
		limit = DefaultMax
	}
	if _, ok := b.m[name]; !ok && len(b.m) >= limit {
		for n := range b.m { // drop about half, any half
			delete(b.m, n)
			if len(b.m) < limit/2 {
				break
			}
		}
	}
	b.m[name] = v
}

// Get returns the value of name, and whether it is remembered.
func (b *Map[V]) Get(name string) (V, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	v, ok := b.m[name]
	return v, ok
}

// Take returns the value of name and forgets it.
func (b *Map[V]) Take(name string) (V, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	v, ok := b.m[name]
	delete(b.m, name)
	return v, ok
}

// Delete forgets name.
func (b *Map[V]) Delete(name string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.m, name)
}

// Len is the number of entries remembered.
func (b *Map[V]) Len() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.m)
}
