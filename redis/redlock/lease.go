package redlock

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/redis/internal/core"
)

// errNoState: a grant that did not come from this store's Acquire.
var errNoState = errors.New("the grant carries no per-master state; pass the Grant that Acquire returned")

func (s *Store) state(g leasehold.Grant) (*grantState, bool) {
	st, ok := g.Private.(*grantState)
	return st, ok && st != nil && st.h != nil && len(st.h.tokens) == len(s.nodes)
}

// forged reports a grant whose token is not the one Acquire returned with
// its per-master state.
func forged(g leasehold.Grant, st *grantState) bool {
	return g.Token != st.token
}

// collect reads the answers of a renew or release round on the masters
// of targets until they settle it (see settled), and ends the round. A
// master that is not a target counts as refused. err is the caller's
// context's, when it ended first.
//
// It also reads the answer of every master i with wait[i] set (each bounded
// by the round's node timeout), even once the outcome is decided.
func (s *Store) collect(ctx context.Context, r *round, targets, wait []bool) (ok, refused int, errs nodeErrors, err error) {
	must := 0
	for _, w := range wait {
		if w {
			must++
		}
	}
	for _, t := range targets {
		if !t { // it did not grant, or its answer was lost
			refused++
		}
	}
	for r.left > 0 && (must > 0 || !s.settled(ok, refused, r.left)) {
		a, err := r.next(ctx)
		if err != nil {
			r.decide(nil)
			return ok, refused, errs, err
		}
		if wait != nil && wait[a.i] {
			must--
		}
		switch {
		case a.err != nil:
			errs.add(s, a.i, a.err)
		case a.ok:
			ok++
		default:
			refused++
		}
	}
	r.decide(nil)
	return ok, refused, errs, nil
}

// settled reports whether the answers of a renew or release decide it:
// ok of them succeeded, refused did not hold the grant, pending are still
// to come. It is decided when ok is a majority, when refused leave no
// majority (ErrNotHeld), or when no answer to come can make either true
// (a store error).
func (s *Store) settled(ok, refused, pending int) bool {
	n, q := len(s.nodes), s.quorum
	return ok >= q || refused > n-q || ok+pending < q && refused+pending <= n-q
}

// applied returns g with the TTL that Renew applies on the masters: the
// TTL of the original request when g.TTL is the validity that Acquire or
// Renew reported (shorter by the drift, so possibly below MinTTL), else
// g.TTL as the caller changed it.
func (s *Store) applied(g leasehold.Grant) leasehold.Grant {
	if st, ok := s.state(g); ok && g.TTL == st.ttl-s.drift(st.ttl) {
		g.TTL = st.ttl
	}
	return g
}

// Renew extends the lease on every master that granted it, and succeeds
// when a majority did within the validity time. It returns ErrNotHeld when
// too many masters refused for a majority to remain. The TTL applied is
// the one of the original request (g.TTL reports the validity, shorter by
// the drift), unless g.TTL was changed.
func (s *Store) Renew(ctx context.Context, g leasehold.Grant) (leasehold.Grant, error) {
	if err := leasehold.CheckRenew(s.applied(g), s.Info()); err != nil {
		return leasehold.Grant{}, err
	}
	st, ok := s.state(g)
	if !ok {
		return leasehold.Grant{}, &leasehold.StoreError{Store: Name, Op: "renew", Err: fmt.Errorf("key %q: %w", g.Key, errNoState)}
	}
	if forged(g, st) {
		return leasehold.Grant{}, fmt.Errorf("renew %q: token %d is not the grant's: %w", g.Key, g.Token, leasehold.ErrNotHeld)
	}
	ttl := s.applied(g).TTL
	if err := s.check(ctx, "renew"); err != nil {
		return leasehold.Grant{}, err
	}
	ms := core.TTLMillis(ttl)
	ttl = time.Duration(ms) * time.Millisecond
	toks, targets := st.h.view(false)
	start := time.Now()
	c := s.names.RenewCall(g.Key, g.Owner, st.token, ms)
	r, err := s.start(ctx, "renew", s.nodeTimeout(ttl), targets, func(nctx context.Context, i int) answer {
		if toks[i] == 0 { // its acquire answer came late, or is still to come
			if tok, _, err := st.h.await(nctx, i); tok == 0 || err != nil {
				return answer{err: err}
			}
		}
		ok, err := s.nodes[i].RenewWith(nctx, c)
		return answer{ok: ok, err: err}
	})
	if err != nil {
		return leasehold.Grant{}, err
	}
	renewed, refused, errs, err := s.collect(ctx, r, targets, nil)
	elapsed := time.Since(start)
	if err != nil {
		return leasehold.Grant{}, err
	}
	drift := s.drift(ttl)
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

// Release deletes the lease on every master that granted it, waiting for
// the answer of each master known to hold it (bounded by the node timeout). It succeeds when a
// majority released it, and returns ErrNotHeld when too many masters no
// longer held it for that.
func (s *Store) Release(ctx context.Context, g leasehold.Grant) error {
	if err := leasehold.CheckRelease(g); err != nil {
		return err
	}
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
	// A master whose acquire answer was lost is left to the TTL: without
	// its token, only the owner id could match there. One whose answer is
	// still to come deletes its grant when it comes: the release counts
	// that.
	toks, targets := st.h.view(true)
	c := s.names.ReleaseCall(g.Key, g.Owner, st.token)
	r, err := s.start(ctx, "release", s.nodeTimeout(st.ttl), targets, func(nctx context.Context, i int) answer {
		if toks[i] == 0 {
			if tok, freed, err := st.h.await(nctx, i); tok == 0 || err != nil {
				return answer{ok: freed, err: err}
			}
		}
		ok, err := s.nodes[i].ReleaseWith(nctx, c)
		return answer{ok: ok, err: err}
	})
	if err != nil {
		return err
	}
	// Release reads the answer of every master known to hold the grant:
	// once it returns, none of them still holds it, so Holder (an
	// election's observer, say) sees the key free at once rather than a
	// minority still holding it, which with one master down it could not
	// tell from a majority. A master whose acquire answer is still to come
	// is not waited for: its grant is deleted when the answer comes.
	wait := make([]bool, len(toks))
	for i, tok := range toks {
		wait[i] = targets[i] && tok != 0
	}
	released, refused, errs, err := s.collect(ctx, r, targets, wait)
	if err != nil {
		return err
	}
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
//
// The masters are read one by one, not at one instant: a read that
// overlaps an acquire or a release sees some masters before it and some
// after. With a master down that can leave it unable to tell (a minority
// holding, the rest free, one unanswered), so Holder reads again, twice at
// most, a little later, before it says it cannot tell.
func (s *Store) Holder(ctx context.Context, key string) (leasehold.Holder, error) {
	if err := leasehold.CheckHolder(key); err != nil {
		return leasehold.Holder{}, err
	}
	if err := s.check(ctx, "holder"); err != nil {
		return leasehold.Holder{}, err
	}
	for try := 1; ; try++ {
		h, undecided, err := s.holderOnce(ctx, key)
		if !undecided || try == 3 {
			return h, err
		}
		select {
		case <-ctx.Done():
			return leasehold.Holder{}, ctx.Err()
		case <-time.After(time.Duration(try) * holderRetry):
		}
	}
}

// holderRetry is the wait before Holder's second read; its third waits
// twice as long.
const holderRetry = 20 * time.Millisecond

// holderOnce is one read of every master; undecided when it cannot tell
// whether a majority holds the key.
func (s *Store) holderOnce(ctx context.Context, key string) (h leasehold.Holder, undecided bool, err error) {
	var (
		mu   sync.Mutex
		t    tally
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
			t.addHeld(l)
		}
	})
	if err := ctx.Err(); err != nil {
		return leasehold.Holder{}, false, err
	}
	top := t.largestHolder()
	if len(top) >= s.quorum {
		he := s.heldError(key, top)
		return leasehold.Holder{Key: key, Label: he.Label, Token: he.Token, Remaining: he.Remaining}, false, nil
	}
	if len(top)+len(t.errs) >= s.quorum {
		return leasehold.Holder{}, true, s.quorumError("holder", "answered", key, len(s.nodes)-len(t.errs), t.errs, "cannot tell whether a majority holds it")
	}
	return leasehold.Holder{}, false, fmt.Errorf("holder %q: no owner holds a majority: %w", key, leasehold.ErrNotHeld)
}
