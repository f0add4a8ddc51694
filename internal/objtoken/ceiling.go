// Package objtoken is the token bookkeeping the object stores (s3,
// azblob) share: a key's lease object carries, beside its token, a
// ceiling that the key's counter object was raised to, so that the
// acquires under it need not touch the counter ([Next], [Ceiling]); and a
// store remembers what its own release of a key left ([Released]), so
// that the key's next acquire writes at once, conditional on that
// version, without a read.
package objtoken

import (
	"math"
	"time"

	"github.com/leasehold-go/leasehold/internal/bounded"
)

// Step is how far past the token it grants an acquire that raises a
// key's counter raises it: a second's worth of the server's time in µs.
// Tokens are at least the server's time in µs (Next), so a key's counter
// is raised about once a second while the key is busy (once per acquire
// when its acquires are further apart), and a token taken from the
// counter (after its lease object was deleted) runs at most a second
// ahead of the server's time.
const Step = 1_000_000

// Ceiling is the counter value that reserves the tokens up to Step past
// tok, at most 2^64-1.
func Ceiling(tok uint64) uint64 {
	if tok > math.MaxUint64-Step {
		return math.MaxUint64
	}
	return tok + Step
}

// Next is the token after last: last + 1, and at least the server's time
// now in µs (now is a server's Date, whole seconds; the zero time for
// none), when ceiling (which the counter is at or above; 0: unknown)
// still covers it; false when the counter must be raised first, or the
// key's tokens are exhausted.
func Next(last, ceiling uint64, now time.Time) (uint64, bool) {
	if last == math.MaxUint64 {
		return 0, false
	}
	tok := max(last+1, uint64(max(now.UnixMicro(), 0)))
	if tok > ceiling {
		return 0, false
	}
	return tok, true
}

// MaxReleased bounds the objects a Released remembers. Forgetting one
// costs its next acquire a read, nothing else.
const MaxReleased = bounded.DefaultMax

// Released remembers, by object name, what a store's own release left
// there (its version, token and ceiling: the store's T). The zero value
// is ready to use; it is safe for concurrent use.
type Released[T any] struct {
	m bounded.Map[T] // at most MaxReleased
}

// Put remembers v for name, forgetting about half of the others first
// when MaxReleased are remembered.
func (r *Released[T]) Put(name string, v T) { r.m.Put(name, v) }

// Take returns what is remembered for name and forgets it, so that it is
// tried once.
func (r *Released[T]) Take(name string) (T, bool) { return r.m.Take(name) }
