package redlock

import (
	"context"
	"slices"
	"sync"
	"time"
)

// grantState is a grant's per-master state, kept in Grant.Private.
type grantState struct {
	ttl   time.Duration // the TTL applied on the masters
	token uint64        // the grant's token, the same on each of its masters
	h     *holding      // shared by the copies Renew makes
}

// holding is where a grant is held: each master's token, 0 where it did
// not grant (or has not answered yet). A master that grants after Acquire
// returned is added here, unless the grant was released by then.
type holding struct {
	mu       sync.Mutex
	tokens   []uint64
	late     []*lateAnswer // by master; nil for those answered in time
	released bool          // Release was called: a late grant is deleted, not kept
}

// lateAnswer is what became of an acquire answer that came after Acquire
// returned, for the renewals and releases sent before it came.
type lateAnswer struct {
	done  chan struct{} // closed once it came and was dealt with
	freed bool          // it granted after Release was called, and was deleted
}

// newHolding returns the holding of a grant whose masters' answers came
// in time where answered says so; the others get a lateAnswer.
func newHolding(tokens []uint64, answered []bool) *holding {
	h := &holding{tokens: tokens}
	for i, ok := range answered {
		if !ok {
			if h.late == nil {
				h.late = make([]*lateAnswer, len(answered))
			}
			h.late[i] = &lateAnswer{done: make(chan struct{})}
		}
	}
	return h
}

// view returns the tokens, and the masters a renew or release is sent to:
// those that granted and those whose answer came late or is still to
// come (see await). With release, it marks the grant released first, so
// that a grant coming later is deleted by the goroutine that gets it.
func (h *holding) view(release bool) (toks []uint64, targets []bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.released = h.released || release
	toks = slices.Clone(h.tokens)
	targets = make([]bool, len(toks))
	for i, t := range toks {
		targets[i] = t != 0 || h.late != nil && h.late[i] != nil
	}
	return toks, targets
}

// await waits for master i's late answer and returns its token (0: it did
// not grant, its answer was lost like one that came in time, or the grant
// was released and its late grant deleted: freed), or the error of ctx.
func (h *holding) await(ctx context.Context, i int) (tok uint64, freed bool, err error) {
	la := h.late[i]
	select {
	case <-la.done:
	case <-ctx.Done():
		return 0, false, ctx.Err()
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.tokens[i], la.freed, nil
}

// keepLate deals with a master's acquire answer that came after the round
// was decided: a grant joins the grant, or is deleted if the grant was
// released meanwhile. It blocks only to delete, which never happens when
// decide hands it an answer (the grant is not returned yet).
func (s *Store) keepLate(key, owner string, ttl time.Duration, h *holding, a answer) {
	la := h.late[a.i]
	h.mu.Lock()
	released := h.released
	if a.tok != 0 && !released {
		h.tokens[a.i] = a.tok
	}
	h.mu.Unlock()
	if a.tok != 0 && released {
		ctx, cancel := context.WithTimeout(s.bg, s.nodeTimeout(ttl))
		ok, err := s.nodes[a.i].Release(ctx, key, owner, a.tok)
		cancel()
		h.mu.Lock()
		la.freed = ok && err == nil
		h.mu.Unlock()
	}
	close(la.done)
}
