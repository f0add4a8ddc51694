package serve

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/leasehold-go/leasehold/internal/wire"
)

// ruleKey is the request context's key of the caller's rule.
type ruleKey struct{}

// authenticate returns r with the rule of its bearer token in its context,
// or answers 401 and returns nil. Without Options.Tokens every request
// passes; the OpenAPI document is public.
func (s *Server) authenticate(w http.ResponseWriter, r *http.Request) *http.Request {
	if s.opts.Tokens == nil || r.URL.Path == "/v1/openapi.json" {
		return r
	}
	token, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	rl, known := s.opts.Tokens.lookup(strings.TrimSpace(token))
	if !ok || !known {
		w.Header().Set("WWW-Authenticate", `Bearer realm="leasehold"`)
		msg := "this server needs a bearer token (Authorization: Bearer TOKEN)"
		if ok {
			msg = "the bearer token is not one this server accepts (revoked, or mistyped)"
		}
		writeError(w, http.StatusUnauthorized, wire.CodeUnauthorized, msg)
		return nil
	}
	return r.WithContext(context.WithValue(r.Context(), ruleKey{}, rl))
}

// authorize returns nil if the caller may do verb on key (for a list,
// on every key with the list's prefix), else a 403 *requestError.
func (s *Server) authorize(r *http.Request, verb, key string) error {
	return s.permit(r, verb, key, func(rl rule) bool { return rl.allows(verb, key) })
}

// authorizeAnywhere returns nil if the caller may do verb on some key (to
// read the server's info), else a 403 *requestError.
func (s *Server) authorizeAnywhere(r *http.Request, verb string) error {
	return s.permit(r, verb, "", func(rl rule) bool { return slices.Contains(rl.verbs, verb) })
}

func (s *Server) permit(r *http.Request, verb, key string, ok func(rule) bool) error {
	if s.opts.Tokens == nil {
		return nil
	}
	rl, _ := r.Context().Value(ruleKey{}).(rule)
	if ok(rl) {
		return nil
	}
	return &requestError{http.StatusForbidden, wire.CodeForbidden, fmt.Sprintf("%s may not %s %q", rl.name, verb, key)}
}
