package fence

import (
	"slices"
	"sync"
)

// Register is an in-memory fenced register for tests: a single value that
// accepts a write only if its token is greater than or equal to the highest
// token accepted so far. It counts and records every write, accepted or not,
// so that a test can check that no stale holder ever got through.
//
// The zero value is an empty register (highest token 0, which any token
// passes) and is ready to use. It is safe for concurrent use.
type Register[V any] struct {
	mu       sync.Mutex
	value    V
	highest  uint64
	written  bool
	accepted int
	rejected int
	history  []Write[V]
}

// Write is one attempted write of a [Register], in the order the register
// saw them.
type Write[V any] struct {
	Token    uint64
	Value    V
	Accepted bool
}

// Write stores value if token is greater than or equal to the highest token
// accepted so far, and records token as the highest. Otherwise it leaves the
// register unchanged and returns a *[StaleError]. Both outcomes are counted
// and recorded in the history.
func (r *Register[V]) Write(token uint64, value V) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if token < r.highest {
		r.rejected++
		r.history = append(r.history, Write[V]{Token: token, Value: value})
		return &StaleError{Resource: "register", Token: token, Highest: r.highest}
	}
	r.value, r.highest, r.written = value, token, true
	r.accepted++
	r.history = append(r.history, Write[V]{Token: token, Value: value, Accepted: true})
	return nil
}

// Read returns the last accepted value and its token, and whether any write
// has been accepted.
func (r *Register[V]) Read() (value V, token uint64, ok bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.value, r.highest, r.written
}

// Counts returns the number of accepted and rejected writes.
func (r *Register[V]) Counts() (accepted, rejected int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.accepted, r.rejected
}

// History returns a copy of every attempted write, oldest first. The
// history grows by one entry per write, for the register's whole life.
func (r *Register[V]) History() []Write[V] {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.history)
}
