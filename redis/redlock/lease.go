package redlock

import (
	"context"
	"errors"
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

// tally is the outcome of one round of requests to every master.
type tally struct {
	st      *grantState
	granted int
	held    map[string][]*core.Lease // by owner
	errs    nodeErrors
	elapsed time.Duration
}

// Acquire claims req.Key on a majority of the masters; see the package
// documentation. The grant's TTL is the validity, TTL - drift, counted from
// before the first request; Grant.Private holds each master's token.
func (s *Store) Acquire(ctx context.Context, req leasehold.AcquireRequest) (leasehold.Grant, error) {
	if err := leasehold.ValidateKey(req.Key); err != nil {
		return leasehold.Grant{}, err
	}
	if err := leasehold.ValidateTTL(req.TTL, s.Info()); err != nil {
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

// errNoState: a grant that did not come from this store's Acquire.
var errNoState = errors.New("the grant carries no per-master state; pass the Grant that Acquire returned")

func (s *Store) state(g leasehold.Grant) (*grantState, bool) {
	st, ok := g.Private.(*grantState)
	return st, ok && st != nil && len(st.tokens) == len(s.nodes)
}

// forged reports a grant whose token is not the one Acquire returned with
// its per-master state.
func forged(g leasehold.Grant, st *grantState) bool {
	return g.Token != slices.Max(st.tokens)
}

// Renew extends the lease on every master that granted it, and succeeds
// when a majority did within the validity time. It returns ErrNotHeld when
// too many masters refused for a majority to remain. The TTL applied is
// the one of the original request (g.TTL reports the validity, shorter by
// the drift), unless g.TTL was changed.
func (s *Store) Renew(ctx context.Context, g leasehold.Grant) (leasehold.Grant, error) {
	st, ok := s.state(g)
	if !ok {
		return leasehold.Grant{}, &leasehold.StoreError{Store: Name, Op: "renew", Err: fmt.Errorf("key %q: %w", g.Key, errNoState)}
	}
	if forged(g, st) {
		return leasehold.Grant{}, fmt.Errorf("renew %q: token %d is not the grant's: %w", g.Key, g.Token, leasehold.ErrNotHeld)
	}
	ttl := st.ttl
	if g.TTL != ttl-s.drift(ttl) {
		ttl = g.TTL
	}
	if err := leasehold.ValidateTTL(ttl, s.Info()); err != nil {
		return leasehold.Grant{}, err
	}
	if err := s.check(ctx, "renew"); err != nil {
		return leasehold.Grant{}, err
	}
	ms := core.TTLMillis(ttl)
	ttl = time.Duration(ms) * time.Millisecond
	var (
		mu               sync.Mutex
		renewed, refused int
		errs             nodeErrors
	)
	start := time.Now()
	s.each(ctx, s.nodeTimeout(ttl), func(nctx context.Context, i int) {
		if st.tokens[i] == 0 {
			mu.Lock()
			refused++
			mu.Unlock()
			return
		}
		ok, err := s.nodes[i].Renew(nctx, g.Key, g.Owner, st.tokens[i], ms)
		mu.Lock()
		defer mu.Unlock()
		switch {
		case err != nil:
			errs.add(s, i, err)
		case ok:
			renewed++
		default:
			refused++
		}
	})
	elapsed := time.Since(start)
	drift := s.drift(ttl)
	if err := ctx.Err(); err != nil && renewed < s.quorum {
		return leasehold.Grant{}, err
	}
	switch {
	case refused > len(s.nodes)-s.quorum:
		return leasehold.Grant{}, fmt.Errorf("renew %q: %d of %d masters refused: %w", g.Key, refused, len(s.nodes), leasehold.ErrNotHeld)
	case renewed < s.quorum:
		return leasehold.Grant{}, s.quorumError("renew", "renewed", g.Key, renewed, errs, "")
	case ttl-elapsed-drift <= 0:
		return leasehold.Grant{}, &leasehold.StoreError{Store: Name, Op: "renew", Err: fmt.Errorf(
			"key %q: a majority renewed, but only after %s of the %s TTL: no validity left", g.Key, elapsed.Round(time.Microsecond), ttl)}
	}
	if ttl != st.ttl {
		st2 := *st
		st2.ttl = ttl
		g.Private = &st2
	}
	g.TTL = ttl - drift
	return g, nil
}

// Release deletes the lease on every master that granted it. It succeeds when a majority
// released it, and returns ErrNotHeld when too many masters no longer held
// it for that.
func (s *Store) Release(ctx context.Context, g leasehold.Grant) error {
	st, ok := s.state(g)
	if !ok {
		return &leasehold.StoreError{Store: Name, Op: "release", Err: fmt.Errorf("key %q: %w", g.Key, errNoState)}
	}
	if forged(g, st) {
		return fmt.Errorf("release %q: token %d is not the grant's: %w", g.Key, g.Token, leasehold.ErrNotHeld)
	}
	if err := s.check(ctx, "release"); err != nil {
		return err
	}
	var (
		mu                sync.Mutex
		released, refused int
		errs              nodeErrors
	)
	s.each(ctx, s.nodeTimeout(st.ttl), func(nctx context.Context, i int) {
		// A master whose acquire answer was lost is left to the TTL:
		// without its token, only the owner id could match there.
		if st.tokens[i] == 0 {
			mu.Lock()
			refused++
			mu.Unlock()
			return
		}
		ok, err := s.nodes[i].Release(nctx, g.Key, g.Owner, st.tokens[i])
		mu.Lock()
		defer mu.Unlock()
		switch {
		case err != nil:
			errs.add(s, i, err)
		case ok:
			released++
		default:
			refused++
		}
	})
	switch {
	case released >= s.quorum:
		return nil
	case refused > len(s.nodes)-s.quorum:
		return fmt.Errorf("release %q: %d of %d masters no longer held it: %w", g.Key, refused, len(s.nodes), leasehold.ErrNotHeld)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	return s.quorumError("release", "released", g.Key, released, errs, "")
}

// Holder reports the majority's view: the owner holding the key on at
// least N/2+1 masters, with the largest of its tokens and the time until
// fewer than a majority hold it. ErrNotHeld when no owner has a majority;
// a *leasehold.StoreError when too few masters answered to tell.
func (s *Store) Holder(ctx context.Context, key string) (leasehold.Holder, error) {
	if err := leasehold.ValidateKey(key); err != nil {
		return leasehold.Holder{}, err
	}
	if err := s.check(ctx, "holder"); err != nil {
		return leasehold.Holder{}, err
	}
	var (
		mu   sync.Mutex
		t    = tally{held: make(map[string][]*core.Lease)}
		free int
	)
	s.each(ctx, s.nodeTimeout(10*time.Second), func(nctx context.Context, i int) {
		l, err := s.nodes[i].Holder(nctx, key)
		mu.Lock()
		defer mu.Unlock()
		switch {
		case err != nil:
			t.errs.add(s, i, err)
		case l == nil:
			free++
		default:
			t.held[l.Owner] = append(t.held[l.Owner], l)
		}
	})
	if err := ctx.Err(); err != nil {
		return leasehold.Holder{}, err
	}
	top := t.largestHolder()
	if len(top) >= s.quorum {
		he := s.heldError(key, top)
		return leasehold.Holder{Key: key, Label: he.Label, Token: he.Token, Remaining: he.Remaining}, nil
	}
	if len(top)+len(t.errs) >= s.quorum {
		return leasehold.Holder{}, s.quorumError("holder", "answered", key, len(s.nodes)-len(t.errs), t.errs, "cannot tell whether a majority holds it")
	}
	return leasehold.Holder{}, fmt.Errorf("holder %q: no owner holds a majority: %w", key, leasehold.ErrNotHeld)
}
