package redlock

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/redis/internal/core"
)

// tally is the outcome of one round of requests to every master, as far
// as its caller read the answers.
type tally struct {
	tokens   []uint64 // each master's token; 0 where it did not grant
	maybe    []bool   // the master's answer was lost: it may have granted
	answered []bool   // the caller read the master's answer
	granted  int
	stale    int                      // masters whose counter was at or above the token
	held     map[string][]*core.Lease // by owner; made on the first
	top      int                      // the most masters one owner holds
	errs     nodeErrors
	elapsed  time.Duration
}

func newTally(n int) tally {
	return tally{tokens: make([]uint64, n), maybe: make([]bool, n), answered: make([]bool, n)}
}

// add counts an acquire's answer.
func (t *tally) add(s *Store, a answer) {
	t.answered[a.i] = true
	switch {
	case a.err != nil:
		t.maybe[a.i] = true
		t.errs.add(s, a.i, a.err)
	case a.held != nil:
		t.addHeld(a.held)
	case a.stale != 0:
		t.stale++
		s.seen(a.stale)
	default:
		t.tokens[a.i] = a.tok
		t.granted++
	}
}

// addHeld counts a master's lease.
func (t *tally) addHeld(l *core.Lease) {
	if t.held == nil {
		t.held = make(map[string][]*core.Lease)
	}
	t.held[l.Owner] = append(t.held[l.Owner], l)
	t.top = max(t.top, len(t.held[l.Owner]))
}

// largestHolder returns the leases of the owner holding the most masters.
func (t *tally) largestHolder() []*core.Lease {
	var top []*core.Lease
	for _, ls := range t.held {
		if len(ls) > len(top) {
			top = ls
		}
	}
	return top
}

// heldError describes the leases of one holder: its label, the largest
// of its tokens, and the time until fewer than a majority of its masters
// hold it (or until the last one ends, when it has no majority).
func (s *Store) heldError(key string, ls []*core.Lease) *leasehold.HeldError {
	he := &leasehold.HeldError{Key: key}
	if len(ls) == 0 {
		return he
	}
	he.Label = ls[0].Label
	rem := make([]time.Duration, 0, len(ls))
	for _, l := range ls {
		he.Token = max(he.Token, l.Token)
		rem = append(rem, l.Remaining)
	}
	slices.Sort(rem)
	slices.Reverse(rem)
	he.Remaining = rem[min(s.quorum, len(rem))-1]
	return he
}

// nodeErrors lists per-master failures, for an error message and for
// errors.Is: a refusal every failing master shares (exhausted tokens, a
// foreign value) shows through the quorum error.
type nodeErrors []error

func (e *nodeErrors) add(s *Store, i int, err error) {
	*e = append(*e, fmt.Errorf("%s: %w", s.clients[i].Addr(), err))
}

func (e nodeErrors) String() string {
	s := make([]string, len(e))
	for i, err := range e {
		s[i] = err.Error()
	}
	return strings.Join(s, "; ")
}

// quorumErr is a majority that could not be reached. It unwraps to the
// masters' refusals of the data they hold (core.IsRefusal) only: a
// master's timeout must not pass for the caller's context ending.
type quorumErr struct {
	msg  string
	errs nodeErrors
}

func (e *quorumErr) Error() string { return e.msg }

func (e *quorumErr) Unwrap() []error {
	var refusals []error
	for _, err := range e.errs {
		if core.IsRefusal(err) {
			refusals = append(refusals, err)
		}
	}
	return refusals
}

// quorumError reports a majority that could not be reached.
func (s *Store) quorumError(op, verb, key string, ok int, errs nodeErrors, extra string) error {
	msg := fmt.Sprintf("key %q: %d of %d masters %s, need %d", key, ok, len(s.nodes), verb, s.quorum)
	if extra != "" {
		msg += " (" + extra + ")"
	}
	if len(errs) > 0 {
		msg += ": " + errs.String()
	}
	return &leasehold.StoreError{Store: Name, Op: op, Err: &quorumErr{msg: msg, errs: errs}}
}
