package serve

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/internal/wire"
)

// errNoHandle refuses a renew or release of a grant bound to a server that
// does not have it.
var errNoHandle = fmt.Errorf("this server keeps no such grant (it was released or expired, or the server restarted since it was granted): %w", leasehold.ErrNotHeld)

func (s *Server) acquire() http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var body wire.AcquireRequest
		if err := s.decode(w, r, &body); err != nil {
			writeFailure(w, err, "")
			return
		}
		if err := s.authorize(r, VerbAcquire, body.Key); err != nil {
			writeFailure(w, err, "")
			return
		}
		req := leasehold.AcquireRequest{Key: body.Key, Owner: body.Owner, Label: body.Label, TTL: wire.Ms(body.TTLMs)}
		if err := leasehold.CheckAcquire(req, s.info); err != nil {
			writeFailure(w, err, body.Owner)
			return
		}
		if err := checkOwner(body.Owner); err != nil {
			writeFailure(w, err, "")
			return
		}
		if body.WaitMs < 0 {
			writeFailure(w, fmt.Errorf("%w: wait_ms %d is negative", leasehold.ErrInvalidWait, body.WaitMs), body.Owner)
			return
		}
		g, err := s.acquireFor(r.Context(), req, body)
		if err != nil {
			if errors.Is(err, leasehold.ErrHeld) {
				s.stats.refused(req.Key)
			}
			writeFailure(w, err, body.Owner)
			return
		}
		out := wire.Grant{Key: g.Key, Owner: g.Owner, Label: g.Label, Token: g.Token, TTLMs: wire.MsFloor(g.TTL)}
		if g.Private != nil || g.Lost != nil || !s.info.PortableGrants {
			out.Handle = s.bound.put(g, time.Now())
		} else {
			s.known.put(g, time.Now())
		}
		s.stats.pulse()
		s.local.touched(g.Key)
		writeJSON(w, http.StatusOK, out)
	}
}

// acquireWait tries to acquire, and while the key is held and wait lasts,
// tries again whenever the key may have become free (or after a short
// backoff). It ends at once when ctx (the client's request) ends.
func (s *Server) acquireWait(ctx context.Context, req leasehold.AcquireRequest, wait time.Duration) (leasehold.Grant, error) {
	g, err := s.store.Acquire(ctx, req)
	if wait <= 0 || !errors.Is(err, leasehold.ErrHeld) {
		return g, err
	}
	done, err := s.waits.take(s.opts.MaxWaits, "acquires waiting", "MaxWaits", "--max-waits")
	if err != nil {
		return leasehold.Grant{}, err
	}
	defer done()
	sig, stop, serr := s.signals(ctx, req.Key, false)
	if serr != nil {
		return leasehold.Grant{}, serr
	}
	defer stop()
	defer s.stats.wait(req.Key)()
	deadline := time.NewTimer(wait)
	defer deadline.Stop()
	for delay := 10 * time.Millisecond; ; delay = min(2*delay, 250*time.Millisecond) {
		g, err = s.store.Acquire(ctx, req)
		if !errors.Is(err, leasehold.ErrHeld) {
			return g, err
		}
		retry := time.NewTimer(delay)
		select {
		case <-sig:
		case <-retry.C:
		case <-deadline.C:
			retry.Stop()
			return g, err
		case <-ctx.Done():
			retry.Stop()
			return leasehold.Grant{}, ctx.Err()
		}
		retry.Stop()
	}
}

// grantOf reads a renew or release body and returns the grant to pass to
// the store, with the handle it is kept under ("" for portable grants).
func (s *Server) grantOf(w http.ResponseWriter, r *http.Request, renew bool) (leasehold.Grant, string, error) {
	var body wire.GrantRequest
	if err := s.decode(w, r, &body); err != nil {
		return leasehold.Grant{}, "", err
	}
	return s.resolve(r, body, renew)
}

// resolve checks a renew or release of body by r's caller and returns the
// grant to pass to the store, with the handle it is kept under.
func (s *Server) resolve(r *http.Request, body wire.GrantRequest, renew bool) (leasehold.Grant, string, error) {
	g := leasehold.Grant{Key: body.Key, Owner: body.Owner, Token: body.Token, TTL: wire.Ms(body.TTLMs)}
	verb, check := VerbRelease, leasehold.CheckRelease(g)
	if renew {
		verb, check = VerbRenew, leasehold.CheckRenew(g, s.info)
	}
	if err := s.authorize(r, verb, g.Key); err != nil {
		return g, "", err
	}
	if check != nil {
		return g, "", check
	}
	handle, kept, ok := s.bound.get(body.Handle, g.Key, g.Owner, g.Token)
	switch {
	case !ok && s.info.PortableGrants:
		return g, "", nil // rebuilt from its key, owner and token
	case !ok:
		return g, "", errNoHandle
	}
	select {
	case <-kept.Lost:
		s.bound.drop(handle)
		why := errors.New("the store lost the grant")
		if le, ok := s.store.(leasehold.LostExplainer); ok && le.LostReason(kept) != nil {
			why = le.LostReason(kept)
		}
		return g, "", fmt.Errorf("%w: %w", why, leasehold.ErrNotHeld)
	default:
	}
	kept.TTL = g.TTL
	return kept, handle, nil
}

func (s *Server) renew() http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		asked, handle, err := s.grantOf(w, r, true)
		g := asked
		if err == nil {
			g, err = s.store.Renew(r.Context(), asked)
			s.renewed(handle, g, err)
		}
		if err != nil {
			writeFailure(w, err, asked.Owner) // a failed Renew returns no grant
			return
		}
		writeJSON(w, http.StatusOK, wire.Grant{Key: g.Key, Owner: g.Owner, Label: g.Label, Token: g.Token, TTLMs: wire.MsFloor(g.TTL), Handle: handle})
	}
}

// renewed notes a kept grant's renewal (handle "" for one not kept): a
// refused one is dropped.
func (s *Server) renewed(handle string, g leasehold.Grant, err error) {
	switch {
	case handle == "" && err == nil:
		s.known.put(g, time.Now())
	case handle == "":
	case err == nil:
		s.bound.renewed(handle, g, time.Now())
	case errors.Is(err, leasehold.ErrNotHeld):
		s.bound.drop(handle)
	}
}

func (s *Server) release() http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		g, handle, err := s.grantOf(w, r, false)
		if err == nil {
			err = s.store.Release(r.Context(), g)
		}
		if handle != "" && (err == nil || errors.Is(err, leasehold.ErrNotHeld)) {
			s.bound.drop(handle)
		}
		if err != nil {
			writeFailure(w, err, g.Owner)
			return
		}
		s.known.forget(g.Key, g.Token)
		s.local.signal(g.Key)
		s.stats.pulse()
		w.WriteHeader(http.StatusNoContent)
	}
}
