package redlock

import (
	"context"
	"fmt"
	"math/rand/v2"
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
// contender leads or ties (nobody holds a majority, enough masters
// answered, and another round may settle it), or masters whose counters
// had reached the proposed token (the next round proposes a larger one).
//
// The round proposes one token to every master, so that all the masters
// of a grant hold the same token (and Holder reports it, whichever of them
// it reads): it is decided as soon as a majority granted, or another owner
// holds one, without waiting for the slowest master.
func (s *Store) acquireOnce(ctx context.Context, req leasehold.AcquireRequest) (g leasehold.Grant, retry bool, err error) {
	ms := core.TTLMillis(req.TTL)
	ttl := time.Duration(ms) * time.Millisecond
	p := s.propose()
	t := newTally(len(s.nodes))
	start := time.Now()
	c := s.names.AcquireCall(req.Key, req.Owner, req.Label, ms, p)
	r, err := s.start(ctx, "acquire", s.nodeTimeout(ttl), nil, func(nctx context.Context, i int) answer {
		tok, h, stale, err := s.nodes[i].AcquireWith(nctx, c)
		return answer{tok: tok, held: h, stale: stale, err: err}
	})
	if err != nil {
		return leasehold.Grant{}, false, err
	}
	for r.left > 0 && t.granted < s.quorum && t.top < s.quorum {
		a, err := r.next(ctx)
		if err != nil {
			s.abandon(ctx, r, req, ttl, &t, false)
			return leasehold.Grant{}, false, err
		}
		t.add(s, a)
	}
	t.elapsed = time.Since(start)
	drift := s.drift(ttl)
	if t.granted >= s.quorum && ttl-t.elapsed-drift > 0 {
		return s.grant(r, req, ttl, p, &t), false, nil
	}
	if t.granted < s.quorum && r.left > 0 {
		return leasehold.Grant{}, false, s.heldEarly(ctx, r, req, ttl, &t)
	}

	// Failed: undo what this round may have taken before returning, on a
	// context detached from the caller's.
	s.abandon(ctx, r, req, ttl, &t, true)
	return s.failed(ctx, req, ttl, &t)
}

// failed returns the error of a round that every master answered (or
// whose majority granted too late), and whether another round may win.
func (s *Store) failed(ctx context.Context, req leasehold.AcquireRequest, ttl time.Duration, t *tally) (leasehold.Grant, bool, error) {
	if err := ctx.Err(); err != nil {
		return leasehold.Grant{}, false, err
	}
	if t.granted >= s.quorum {
		return leasehold.Grant{}, false, &leasehold.StoreError{Store: Name, Op: "acquire", Err: fmt.Errorf(
			"key %q: a majority granted, but only after %s of the %s TTL (drift allowance %s): no validity left",
			req.Key, t.elapsed.Round(time.Microsecond), ttl, s.drift(ttl))}
	}
	if len(s.nodes)-len(t.errs) < s.quorum {
		return leasehold.Grant{}, false, s.quorumError("acquire", "granted", req.Key, t.granted, t.errs,
			fmt.Sprintf("%d held by others, %d unreachable", len(s.nodes)-t.granted-len(t.errs), len(t.errs)))
	}
	if t.stale > 0 && t.granted+t.stale >= s.quorum {
		// Free masters enough, some with a counter at or above the token
		// (a client whose clock is ahead): propose above it.
		return leasehold.Grant{}, true, s.quorumError("acquire", "granted", req.Key, t.granted, nil,
			fmt.Sprintf("%d had a token counter at or above the proposed token", t.stale))
	}
	top := t.largestHolder()
	he := s.heldError(req.Key, top)
	if len(top) >= s.quorum || len(top) > t.granted {
		return leasehold.Grant{}, false, he // held, or another contender leads the split
	}
	return leasehold.Grant{}, true, he // a split vote this contender leads or ties
}

// grant ends a round that won a majority in time. The masters that grant
// after it join the grant (or are released, if the grant was).
func (s *Store) grant(r *round, req leasehold.AcquireRequest, ttl time.Duration, p uint64, t *tally) leasehold.Grant {
	h := newHolding(t.tokens, t.answered)
	r.decide(func(a answer) { s.keepLate(req.Key, req.Owner, ttl, h, a) })
	return leasehold.Grant{
		Key: req.Key, Owner: req.Owner, Label: req.Label,
		Token: p, TTL: ttl - s.drift(ttl), Private: &grantState{ttl: ttl, token: p, h: h},
	}
}

// heldEarly ends a round in which another owner holds a majority before
// every master answered: the answers already come are counted, the rest
// and what this round took are left to the background. The holder's token
// is reported only when every master answered: a master still to answer
// may hold a larger one, which Holder would report.
func (s *Store) heldEarly(ctx context.Context, r *round, req leasehold.AcquireRequest, ttl time.Duration, t *tally) error {
	for r.left > 0 {
		a, ok := r.poll()
		if !ok {
			break
		}
		t.add(s, a)
	}
	he := s.heldError(req.Key, t.largestHolder())
	if r.left > 0 {
		he.Token = 0
	}
	s.abandon(ctx, r, req, ttl, t, false)
	return he
}

// abandon ends a round that failed: it deletes what the answers read so
// far took (before returning when wait is set, else in the background)
// and what the answers still to come take, in the background, as they
// come. In the background only grants whose token came back are deleted:
// a master whose answer was lost is left to the TTL there (see undo).
func (s *Store) abandon(ctx context.Context, r *round, req leasehold.AcquireRequest, ttl time.Duration, t *tally, wait bool) {
	timeout := s.nodeTimeout(ttl)
	late := func(a answer) {
		if a.tok != 0 {
			s.background(timeout, func(ctx context.Context) { _, _ = s.nodes[a.i].Release(ctx, req.Key, req.Owner, a.tok) })
		}
	}
	if wait {
		r.decide(late)
		s.releaseAll(ctx, req.Key, req.Owner, timeout, t.tokens, t.maybe)
		return
	}
	if t.granted > 0 {
		s.background(timeout, func(bctx context.Context) {
			s.releaseAll(bctx, req.Key, req.Owner, timeout, t.tokens, nil)
		})
	}
	r.decide(late)
}

// releaseAll deletes, at once on every master, what a round took: the
// grants of tokens, and where maybe (nil: nowhere) says the answer was
// lost, this owner's grant if the master has one (see undo). Errors are
// ignored: the TTL ends what is left.
func (s *Store) releaseAll(ctx context.Context, key, owner string, timeout time.Duration, tokens []uint64, maybe []bool) {
	s.each(context.WithoutCancel(ctx), timeout, func(nctx context.Context, i int) {
		if tokens[i] != 0 || maybe != nil && maybe[i] {
			s.undo(nctx, i, key, owner, tokens[i])
		}
	})
}

// undo deletes what one master's answer to an acquire took: the grant of
// tok, or, when tok is 0 (the answer was lost), this owner's grant if the
// master has one. That second case must run before the acquire returns.
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
func (s *Store) undo(ctx context.Context, i int, key, owner string, tok uint64) {
	if tok == 0 {
		l, err := s.nodes[i].Holder(ctx, key)
		if err != nil || l == nil || l.Owner != owner {
			return
		}
		tok = l.Token
	}
	_, _ = s.nodes[i].Release(ctx, key, owner, tok)
}
