package s3

import (
	"math"
	"sync"
)

// ceilingStep is how far past the token it grants an acquire that raises
// the counter object raises it: the lease object then carries that
// ceiling, and the next acquires of the key take the tokens under it
// without touching the counter (one counter read and write per
// ceilingStep grants of a key, not per grant). Tokens run at most this
// many µs ahead of the server's time of the counter's last raise, which
// widens the window in which deleting both objects can repeat a token by
// a millisecond (see the package doc).
const ceilingStep = 1000

// ceilingOf is the counter value that reserves the tokens up to
// ceilingStep past tok, at most 2^64-1.
func ceilingOf(tok uint64) uint64 {
	if tok > math.MaxUint64-ceilingStep {
		return math.MaxUint64
	}
	return tok + ceilingStep
}

// underCeiling is the token after last when the ceiling a lease object
// carries (which the counter is at or above) still covers it; false when
// the counter must be raised first (or the key's tokens are exhausted).
func underCeiling(last, ceiling uint64) (uint64, bool) {
	if last == math.MaxUint64 || last+1 > ceiling {
		return 0, false
	}
	return last + 1, true
}

// maxReleased bounds the lease objects a store remembers releasing.
// Forgetting one costs its next acquire a read, nothing else.
const maxReleased = 1024

// releasedObject is what the store's own release left in a lease object:
// the tombstone's ETag, token and ceiling.
type releasedObject struct {
	etag           string
	token, ceiling uint64
}

// releasedObjects remember the lease objects this store released, so that
// the next acquire of the key writes at once, with If-Match on the
// tombstone's ETag: the write lands only if nobody wrote the object since,
// so it is still the tombstone remembered, as a read would have shown.
type releasedObjects struct {
	mu sync.Mutex
	m  map[string]releasedObject
}

// put remembers what the release of lease object name left.
func (r *releasedObjects) put(name string, o releasedObject) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.m == nil {
		r.m = map[string]releasedObject{}
	}
	if _, ok := r.m[name]; !ok && len(r.m) >= maxReleased {
		for n := range r.m { // drop about half, any half
			delete(r.m, n)
			if len(r.m) < maxReleased/2 {
				break
			}
		}
	}
	r.m[name] = o
}

// take returns what is remembered of name and forgets it, so that it is
// tried once.
func (r *releasedObjects) take(name string) (releasedObject, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	o, ok := r.m[name]
	delete(r.m, name)
	return o, ok
}
