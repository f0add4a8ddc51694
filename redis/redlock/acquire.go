package redlock

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/redis/internal/core"
)

// A split vote (simultaneous contenders, none with a majority) is retried
// by the contenders that got the most masters; the others give up with a
// HeldError, so the leaders find the masters free. A retry waits a random
// delay below splitDelay doubled per attempt (at most splitDelayCap), so
// that tied leaders drift apart; after splitRetries it gives up too.
const (
	splitRetries  = 10
	splitDelay    = time.Millisecond
	splitDelayCap = 64 * time.Millisecond
)

// Acquire claims req.Key on a majority of the masters; see the package
// documentation. The grant's TTL is the validity, TTL - drift, counted from
// before the first request; Grant.Private holds each master's token.
func (s *Store) Acquire(ctx context.Context, req leasehold.AcquireRequest) (leasehold.Grant, error) {
	if err := leasehold.CheckAcquire(req, s.Info()); err != nil {
		return leasehold.Grant{}, err
	}
	for attempt := 1; ; attempt++ {
		if err := s.check(ctx, "acquire"); err != nil {
			return leasehold.Grant{}, err
		}
		g, retry, err := s.acquireOnce(ctx, req)
		if !retry || attempt > splitRetries {
			return g, err
		}
		t := time.NewTimer(rand.N(min(splitDelay<<attempt, splitDelayCap)))
		select {
		case <-ctx.Done():
			t.Stop()
			return leasehold.Grant{}, ctx.Err()
		case <-t.C:
		}
	}
}

// acquireOnce runs one round. retry reports a split vote that this
// contender leads or ties: nobody holds a majority, enough masters
// answered, and another round may settle it.
func (s *Store) acquireOnce(ctx context.Context, req leasehold.AcquireRequest) (g leasehold.Grant, retry bool, err error) {
	ms := core.TTLMillis(req.TTL)
	ttl := time.Duration(ms) * time.Millisecond
	t := tally{
		st:   &grantState{ttl: ttl, tokens: make([]uint64, len(s.nodes)), maybe: make([]bool, len(s.nodes))},
		held: make(map[string][]*core.Lease),
	}
	var mu sync.Mutex
	start := time.Now()
	s.each(ctx, s.nodeTimeout(ttl), func(nctx context.Context, i int) {
		tok, h, err := s.nodes[i].Acquire(nctx, req.Key, req.Owner, req.Label, ms)
		mu.Lock()
		defer mu.Unlock()
		switch {
		case err != nil:
			t.st.maybe[i] = true
			t.errs.add(s, i, err)
		case h != nil:
			t.held[h.Owner] = append(t.held[h.Owner], h)
		default:
			t.st.tokens[i] = tok
			t.granted++
		}
	})
	t.elapsed = time.Since(start)
	drift := s.drift(ttl)
	validity := ttl - t.elapsed - drift
	if t.granted >= s.quorum && validity > 0 {
		return leasehold.Grant{
			Key: req.Key, Owner: req.Owner, Label: req.Label,
			Token: slices.Max(t.st.tokens), TTL: ttl - drift, Private: t.st,
		}, false, nil
	}

	// Failed: undo what this round may have taken, on a context detached
	// from the caller's (which may be what ended the round).
	s.releaseAll(ctx, req.Key, req.Owner, t.st)
	if err := ctx.Err(); err != nil {
		return leasehold.Grant{}, false, err
	}
	if t.granted >= s.quorum {
		return leasehold.Grant{}, false, &leasehold.StoreError{Store: Name, Op: "acquire", Err: fmt.Errorf(
			"key %q: a majority granted, but only after %s of the %s TTL (drift allowance %s): no validity left",
			req.Key, t.elapsed.Round(time.Microsecond), ttl, drift)}
	}
	if len(s.nodes)-len(t.errs) < s.quorum {
		return leasehold.Grant{}, false, s.quorumError("acquire", "granted", req.Key, t.granted, t.errs,
			fmt.Sprintf("%d held by others, %d unreachable", len(s.nodes)-t.granted-len(t.errs), len(t.errs)))
	}
	top := t.largestHolder()
	he := s.heldError(req.Key, top)
	if len(top) >= s.quorum || len(top) > t.granted {
		return leasehold.Grant{}, false, he // held, or another contender leads the split
	}
	return leasehold.Grant{}, true, he // a split vote this contender leads or ties
}

// releaseAll deletes the grant on every master that granted it, or whose
// answer was lost. Errors are ignored: the TTL ends what is left.
//
// A master whose answer was lost is cleaned up in two steps, because its
// token is unknown and the owner id alone does not name this round's grant:
// Acquire retries a split vote with the same owner, and a caller may retry
// with it too. A release that matched the owner alone could reach the master
// late (its call timed out here but the command was still in flight), after
// a later round or acquire of the same owner won the key, and delete that
// later grant while its holder believes it holds the key. So the clean-up
// reads the master's lease and, only if that read answered and names the
// owner, deletes exactly that owner and token. However late either command
// reaches the master, neither can touch a later grant: the read changes
// nothing, and the delete names a token that existed before this call
// returned, so before any later round was sent; a later grant on the
// master gets a greater token. What the read does not see in time (no
// answer, or the lost acquire arriving after it) is left to the TTL: a
// blocked master, never a second holder.
func (s *Store) releaseAll(ctx context.Context, key, owner string, st *grantState) {
	rctx := context.WithoutCancel(ctx)
	s.each(rctx, s.nodeTimeout(st.ttl), func(nctx context.Context, i int) {
		tok := st.tokens[i]
		if tok == 0 {
			if !st.maybe[i] {
				return
			}
			l, err := s.nodes[i].Holder(nctx, key)
			if err != nil || l == nil || l.Owner != owner {
				return
			}
			tok = l.Token
		}
		_, _ = s.nodes[i].Release(nctx, key, owner, tok)
	})
}
