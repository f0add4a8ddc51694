package s3

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/internal/objtoken"
)

// maxTries bounds the read-and-write rounds of one call that lose their
// conditional write to other writers of the same key.
const maxTries = 32

// grantState is a grant's Private value: the ETag of the store's last
// write of the lease, so that a renewal or release of a grant made by this
// process needs one request (a conditional PUT), not a read first, and the
// ceiling its lease object carries. It is used only for the key, owner and
// token it was made for (a copy of the grant with another owner or token
// reads first), and only while the last write was the lease's (a release
// empties it).
type grantState struct {
	key, owner string
	token      uint64
	ceiling    uint64
	etag       atomic.Pointer[string]
}

func newState(g leasehold.Grant, ceiling uint64, etag string) *grantState {
	st := &grantState{key: g.Key, owner: g.Owner, token: g.Token, ceiling: ceiling}
	st.etag.Store(&etag)
	return st
}

// remember keeps etag for the grant's next call; st may be nil.
func (st *grantState) remember(etag string) {
	if st != nil {
		st.etag.Store(&etag)
	}
}

// stateOf returns g's state and the ETag to write on ("" to read first).
func stateOf(g leasehold.Grant) (*grantState, string) {
	st, _ := g.Private.(*grantState)
	if st == nil || st.key != g.Key || st.owner != g.Owner || st.token != g.Token {
		return nil, ""
	}
	return st, *st.etag.Load()
}

// Acquire reads the key's lease object; if it is absent, released or
// expired by the server's clock, it writes the lease with If-None-Match: *
// (absent) or If-Match on the ETag read (released or expired), so that of
// racing acquirers exactly one write lands. The token is the next under
// the ceiling the lease object carries; past it (or without one) the
// acquire first raises the counter object (reserve). A key this store
// released last is written at once, without the read, on the ETag its
// release left (claimReleased).
func (s *Store) Acquire(ctx context.Context, req leasehold.AcquireRequest) (leasehold.Grant, error) {
	if err := leasehold.CheckAcquire(req, s.Info()); err != nil {
		return leasehold.Grant{}, err
	}
	if err := s.checkOpen("acquire"); err != nil {
		return leasehold.Grant{}, err
	}
	name := s.LeaseObject(req.Key)
	g, tok, err := s.claimReleased(ctx, req, name) // tok: of the last write tried
	if err != nil || g.Token != 0 {
		return g, err
	}
	for range maxTries {
		cur, now, err := s.read(ctx, name, req.Key, kindLease, kindReleased)
		if err != nil {
			return leasehold.Grant{}, s.err(ctx, "acquire", name, err)
		}
		if tok != 0 && cur.isGrant(req.Owner, tok) {
			// The last write landed, but its answer was lost and the SDK's
			// retry of it was refused by its own precondition.
			return s.grant(req, tok, cur.rec.Ceiling, cur.etag), nil
		}
		if cur.heldAt(now) {
			return leasehold.Grant{}, &leasehold.HeldError{Key: req.Key, Label: cur.rec.Label, Token: cur.rec.Token, Remaining: cur.remaining(now)}
		}
		var ceiling uint64
		var etag string
		if tok, ceiling, etag, err = s.claim(ctx, req, cur, now); err != nil {
			return leasehold.Grant{}, err
		}
		if etag != "" {
			return s.grant(req, tok, ceiling, etag), nil
		}
	}
	// Every round lost its write to another acquirer: the key is busy.
	return leasehold.Grant{}, &leasehold.HeldError{Key: req.Key}
}

// claimReleased writes req's grant over the tombstone this store's release
// of lease object name left, if it remembers one, with If-Match on its
// ETag (claim): the write lands only if nobody wrote the object since, so
// it is then still that tombstone, as a read would have shown. It returns
// the grant (no token when nothing is remembered or another write came
// first: the caller then reads) and the token of the write it tried.
func (s *Store) claimReleased(ctx context.Context, req leasehold.AcquireRequest, name string) (leasehold.Grant, uint64, error) {
	r, ok := s.rel.Take(name)
	if !ok {
		return leasehold.Grant{}, 0, nil
	}
	cur := &object{rec: tombstone(req.Key, r.token), etag: r.etag}
	cur.rec.Ceiling = r.ceiling
	tok, ceiling, etag, err := s.claim(ctx, req, cur, r.date)
	if err != nil || etag == "" {
		return leasehold.Grant{}, tok, err
	}
	return s.grant(req, tok, ceiling, etag), tok, nil
}

// claim writes the lease on condition that cur (the lease object read at
// the server's time now, nil when absent) is still there, with the token
// after cur's (objtoken.Next: at least now in µs) under cur's ceiling, or
// else one the counter is first raised to (reserve). It
// returns the token, the ceiling and the new ETag, or no ETag when
// another write came first (or the object was deleted since).
func (s *Store) claim(ctx context.Context, req leasehold.AcquireRequest, cur *object, now time.Time) (tok, ceiling uint64, etag string, err error) {
	var ok bool
	if cur != nil {
		ceiling = cur.rec.Ceiling
		tok, ok = objtoken.Next(cur.rec.Token, ceiling, now)
	}
	if !ok {
		var cname string
		if tok, ceiling, cname, err = s.reserve(ctx, req.Key, cur.token()); err != nil {
			return 0, 0, "", s.err(ctx, "acquire", cname, err)
		}
	}
	name := s.LeaseObject(req.Key)
	rec := leaseRecord(req.Key, req.Owner, req.Label, tok, req.TTL)
	rec.Ceiling = ceiling
	etag, err = s.write(ctx, name, &rec, condOf(cur))
	switch {
	case err == nil:
		return tok, ceiling, etag, nil
	case conflict(err) || cur != nil && status(err) == http.StatusNotFound: // written or deleted since
		return tok, ceiling, "", nil
	}
	return 0, 0, "", s.err(ctx, "acquire", name, err)
}

func (s *Store) grant(req leasehold.AcquireRequest, tok, ceiling uint64, etag string) leasehold.Grant {
	g := leasehold.Grant{Key: req.Key, Owner: req.Owner, Label: req.Label, Token: tok, TTL: req.TTL}
	g.Private = newState(g, ceiling, etag)
	return g
}

// reserve raises the key's counter object and returns a new token and the
// ceiling the counter now holds: the token is one more than the larger of
// last (the lease object's token) and the counter, and at least the
// server's time in microseconds (nextToken); the ceiling is objtoken.Step
// past it (objtoken.Ceiling). When the larger is 2^64-1 it writes nothing and the
// error wraps leasehold.ErrTokensExhausted. The counter is written with
// If-Match on the ETag read (If-None-Match: * when absent), so it only
// grows; the store never deletes it.
func (s *Store) reserve(ctx context.Context, key string, last uint64) (tok, ceiling uint64, name string, err error) {
	name = s.CounterObject(key)
	for range maxTries {
		c, now, err := s.read(ctx, name, key, kindCounter)
		if err != nil {
			return 0, 0, name, err
		}
		tok, ok := nextToken(last, c.token(), now)
		if !ok {
			return 0, 0, name, fmt.Errorf("key %q: its token is at %d, the largest a token can be: %w", key, uint64(math.MaxUint64), leasehold.ErrTokensExhausted)
		}
		rec := counterRecord(key, objtoken.Ceiling(tok))
		_, err = s.write(ctx, name, &rec, condOf(c))
		if err == nil {
			return tok, rec.Token, name, nil
		}
		if !conflict(err) {
			return 0, 0, name, err
		}
	}
	return 0, 0, name, fmt.Errorf("the counter changed under %d conditional writes in a row", maxTries)
}

// Renew rewrites the lease with a new TTL under If-Match on the ETag of
// the store's last write of it (or, for a grant from elsewhere, on the
// ETag of a read that found the grant's owner and token). A lease that
// expired but that nobody took since is renewed, keeping its token.
func (s *Store) Renew(ctx context.Context, g leasehold.Grant) (leasehold.Grant, error) {
	if err := leasehold.CheckRenew(g, s.Info()); err != nil {
		return leasehold.Grant{}, err
	}
	if err := s.checkOpen("renew"); err != nil {
		return leasehold.Grant{}, err
	}
	label := g.Label
	_, _, err := s.rewrite(ctx, g, func(cur *object, ceiling uint64) record {
		if cur != nil {
			label = cur.rec.Label
		}
		r := leaseRecord(g.Key, g.Owner, label, g.Token, g.TTL)
		r.Ceiling = ceiling
		return r
	})
	if err != nil {
		return leasehold.Grant{}, s.opErr(ctx, "renew", g.Key, err)
	}
	return g, nil
}

// Release overwrites the lease with a tombstone that keeps its token and
// ceiling, under If-Match as Renew does, and remembers the tombstone for
// the key's next acquire (claimReleased). The store never deletes a lease
// object.
func (s *Store) Release(ctx context.Context, g leasehold.Grant) error {
	if err := leasehold.CheckRelease(g); err != nil {
		return err
	}
	if err := s.checkOpen("release"); err != nil {
		return err
	}
	var tomb record
	etag, date, err := s.rewrite(ctx, g, func(_ *object, ceiling uint64) record {
		tomb = tombstone(g.Key, g.Token)
		tomb.Ceiling = ceiling
		return tomb
	})
	if err == nil {
		if st, _ := stateOf(g); st != nil {
			st.remember("") // the tombstone's ETag must not serve a later call
		}
		s.rel.Put(s.LeaseObject(g.Key), releasedObject{etag: etag, token: tomb.Token, ceiling: tomb.Ceiling, date: date})
	}
	return s.opErr(ctx, "release", g.Key, err)
}

// releasedObject is what the store's own release left in a lease object:
// the tombstone's ETag, token and ceiling.
type releasedObject struct {
	etag           string
	token, ceiling uint64
	date           time.Time // the server's, of the release's answer
}

func (s *Store) opErr(ctx context.Context, op, key string, err error) error {
	if err == nil || errors.Is(err, leasehold.ErrNotHeld) {
		return err
	}
	return s.err(ctx, op, s.LeaseObject(key), err)
}

// rewrite writes next(cur, ceiling) over g's lease if g still holds it:
// first on the ETag the grant remembers, then, after a conflict (another
// writer, or this process's own write whose answer was lost), on the ETag
// of a read that shows g's owner and token. next gets the object read (nil
// when it wrote on the remembered ETag) and the lease's ceiling. It
// returns the ETag of the object as the write left it and the server's
// Date of the answer (the zero time when it has none).
func (s *Store) rewrite(ctx context.Context, g leasehold.Grant, next func(*object, uint64) record) (string, time.Time, error) {
	name := s.LeaseObject(g.Key)
	st, etag := stateOf(g)
	var cur *object
	var last record // the last write tried
	for range maxTries {
		ceiling := uint64(0)
		if st != nil {
			ceiling = st.ceiling
		}
		if etag == "" {
			o, now, err := s.read(ctx, name, g.Key, kindLease, kindReleased)
			if err != nil {
				return "", time.Time{}, err
			}
			if o != nil && last.Write != "" && o.rec.Write == last.Write {
				// The last write landed; its answer was lost and the SDK's
				// retry of it refused by its own precondition.
				st.remember(o.etag)
				return o.etag, now, nil
			}
			if !o.isGrant(g.Owner, g.Token) {
				return "", time.Time{}, leasehold.ErrNotHeld
			}
			cur, etag, ceiling = o, o.etag, o.rec.Ceiling
		}
		last = next(cur, ceiling)
		newTag, date, err := s.writeDated(ctx, name, &last, cond(etag))
		if err == nil {
			st.remember(newTag)
			return newTag, date, nil
		}
		if !conflict(err) {
			return "", time.Time{}, err
		}
		etag = ""
	}
	return "", time.Time{}, fmt.Errorf("the lease changed under %d conditional writes in a row", maxTries)
}

// Holder reads the key's lease object and reports its holder and time
// left by the server's clock (whole seconds: see the package doc).
func (s *Store) Holder(ctx context.Context, key string) (leasehold.Holder, error) {
	if err := leasehold.CheckHolder(key); err != nil {
		return leasehold.Holder{}, err
	}
	if err := s.checkOpen("holder"); err != nil {
		return leasehold.Holder{}, err
	}
	name := s.LeaseObject(key)
	cur, now, err := s.read(ctx, name, key, kindLease, kindReleased)
	if err != nil {
		return leasehold.Holder{}, s.err(ctx, "holder", name, err)
	}
	if !cur.heldAt(now) {
		return leasehold.Holder{}, leasehold.ErrNotHeld
	}
	return leasehold.Holder{Key: key, Label: cur.rec.Label, Token: cur.rec.Token, Remaining: cur.remaining(now)}, nil
}
