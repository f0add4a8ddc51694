package serve

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"

	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/internal/wire"
)

// errCannotBreak refuses a break of a grant whose owner id the server does
// not know: the Store contract releases a grant by its owner and token only.
var errCannotBreak = errors.New("cannot break")

// breakLease answers POST /v1/admin/break {key, token}: it ends the key's
// current lease (see Server.Break) as the caller, who needs the admin verb
// on the key and a name (a token of Options.Tokens).
func (s *Server) breakLease() http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var body wire.BreakRequest
		if err := s.decode(w, r, &body); err != nil {
			writeFailure(w, err, "")
			return
		}
		h, err := s.breakAs(r, body)
		if err != nil {
			writeBreakFailure(w, err)
			return
		}
		writeJSON(w, http.StatusOK, wire.FromHolder(h))
	}
}

// breakAs checks that r's caller may break body.Key and breaks it.
func (s *Server) breakAs(r *http.Request, body wire.BreakRequest) (leasehold.Holder, error) {
	if err := s.authorize(r, VerbAdmin, body.Key); err != nil {
		return leasehold.Holder{}, err
	}
	who, named := caller(r)
	if !named {
		return leasehold.Holder{}, &requestError{http.StatusForbidden, wire.CodeForbidden,
			"breaking a lease needs a named caller with the admin verb on its key; this server has no tokens (Options.Tokens, --token-file)"}
	}
	if err := leasehold.CheckHolder(body.Key); err != nil {
		return leasehold.Holder{}, err
	}
	return s.Break(r.Context(), who, body.Key, body.Token)
}

// writeBreakFailure answers a refused break; one the Store contract cannot
// do is 501.
func writeBreakFailure(w http.ResponseWriter, err error) {
	if errors.Is(err, errCannotBreak) {
		writeError(w, http.StatusNotImplemented, wire.CodeNotImplemented, err.Error())
		return
	}
	writeFailure(w, err, "")
}

// caller returns the name of the request's authenticated caller, if any.
func caller(r *http.Request) (string, bool) {
	rl, ok := r.Context().Value(ruleKey{}).(rule)
	return rl.name, ok && rl.name != ""
}

// Break ends key's current lease, whoever holds it, and logs it with who
// (the caller's name, never a secret) on Options.Logger; if token is not
// zero it must be the current grant's token. It returns the broken lease.
//
// The Store contract releases a grant by its owner id and token only, so
// the server can break a lease whose owner id it knows: one it keeps (see
// Server), or a portable grant acquired or renewed through this server
// since it started. Any other lease (made by another replica, by a client
// of the store itself, or before a restart) is refused with an error that
// says so (501 over HTTP): its TTL ends it. The holder's next renewal is
// refused with not_held, so its lease is lost and its context cancelled.
func (s *Server) Break(ctx context.Context, who, key string, token uint64) (leasehold.Holder, error) {
	h, err := s.store.Holder(ctx, key)
	if err != nil {
		return h, err
	}
	if token != 0 && token != h.Token {
		return h, fmt.Errorf("the lease of %q with token %d is over; token %d holds it now: %w", key, token, h.Token, leasehold.ErrNotHeld)
	}
	handle, g, kept := s.bound.find(key, h.Token)
	if !kept {
		var ok bool
		if g, ok = s.known.get(key, h.Token); !ok {
			return h, fmt.Errorf("%w the lease of %q with token %d: this server did not grant it or renew it since it started, and the %s store releases a grant only by its owner id; it ends when its holder releases it or its TTL runs out: %w",
				errCannotBreak, key, h.Token, s.info.Name, errors.ErrUnsupported)
		}
	}
	if err := s.store.Release(ctx, g); err != nil {
		if errors.Is(err, leasehold.ErrNotHeld) {
			return h, fmt.Errorf("the lease of %q with token %d ended before it could be broken: %w", key, h.Token, err)
		}
		return h, err
	}
	if kept {
		s.bound.drop(handle)
	}
	s.known.forget(key, h.Token)
	s.local.signal(key)
	s.stats.pulse()
	s.log.LogAttrs(ctx, slog.LevelWarn, "lease broken",
		slog.String("by", who), slog.String("key", key), slog.Uint64("token", h.Token), slog.String("holder", h.Label))
	return h, nil
}
