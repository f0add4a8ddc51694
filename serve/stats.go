package serve

import "sync"

// maxContended bounds the keys whose refused acquires the server counts;
// a key first refused beyond it is not counted (the dashboard shows 0).
const maxContended = 10000

// stats counts, per key, the acquires the server holds open (waiters) and
// the acquires refused since it started (contention), for the dashboard,
// and wakes the dashboard streams on every change made through the server.
type stats struct {
	mu        sync.Mutex
	waiting   map[string]int
	contended map[string]uint64
	subs      map[chan struct{}]struct{}
}

func newStats() *stats {
	return &stats{waiting: make(map[string]int), contended: make(map[string]uint64), subs: make(map[chan struct{}]struct{})}
}

// wait counts an acquire of key held open, until the returned function.
func (st *stats) wait(key string) func() {
	st.mu.Lock()
	st.waiting[key]++
	st.mu.Unlock()
	st.pulse()
	return func() {
		st.mu.Lock()
		if st.waiting[key]--; st.waiting[key] <= 0 {
			delete(st.waiting, key)
		}
		st.mu.Unlock()
		st.pulse()
	}
}

// refused counts a refused acquire of key.
func (st *stats) refused(key string) {
	st.mu.Lock()
	if _, ok := st.contended[key]; ok || len(st.contended) < maxContended {
		st.contended[key]++
	}
	st.mu.Unlock()
	st.pulse()
}

// of returns key's waiters and refused acquires.
func (st *stats) of(key string) (waiters int, contention uint64) {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.waiting[key], st.contended[key]
}

// subscribe returns a channel that receives a value (coalesced) on every
// change made through the server, and the function that ends it.
func (st *stats) subscribe() (<-chan struct{}, func()) {
	ch := make(chan struct{}, 1)
	st.mu.Lock()
	st.subs[ch] = struct{}{}
	st.mu.Unlock()
	return ch, func() {
		st.mu.Lock()
		delete(st.subs, ch)
		st.mu.Unlock()
	}
}

// pulse wakes the subscribers.
func (st *stats) pulse() {
	st.mu.Lock()
	defer st.mu.Unlock()
	for ch := range st.subs {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}
