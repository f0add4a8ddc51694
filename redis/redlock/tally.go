package redlock

import (
	"errors"
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

// nodeErrors lists per-master failures for an error message.
type nodeErrors []string

func (e *nodeErrors) add(s *Store, i int, err error) {
	*e = append(*e, fmt.Sprintf("%s: %v", s.clients[i].Addr(), err))
}

func (e nodeErrors) String() string { return strings.Join(e, "; ") }

// quorumError reports a majority that could not be reached.
func (s *Store) quorumError(op, verb, key string, ok int, errs nodeErrors, extra string) error {
	msg := fmt.Sprintf("key %q: %d of %d masters %s, need %d", key, ok, len(s.nodes), verb, s.quorum)
	if extra != "" {
		msg += " (" + extra + ")"
	}
	if len(errs) > 0 {
		msg += ": " + errs.String()
	}
	return &leasehold.StoreError{Store: Name, Op: op, Err: errors.New(msg)}
}
