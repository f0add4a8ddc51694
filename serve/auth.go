package serve

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/leasehold-go/leasehold/internal/wire"
)

// ruleKey is the request context's key of the caller's rule.
type ruleKey struct{}

// authenticate returns r with the rule of its credentials in its context,
// or answers 401 and returns nil. A bearer token, when sent, decides; else
// a client certificate the TLS handshake verified, by its subject common
// name (see Tokens). Without Options.Tokens every request passes; the
// OpenAPI document is public.
func (s *Server) authenticate(w http.ResponseWriter, r *http.Request) *http.Request {
	if s.opts.Tokens == nil || r.URL.Path == "/v1/openapi.json" {
		return r
	}
	token, bearer := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	rl, known := s.opts.Tokens.lookup(strings.TrimSpace(token))
	if cn, ok := verifiedCN(r); ok && !bearer {
		// A certificate without a rule may do nothing: 403 for each verb.
		rl, known = s.opts.Tokens.lookupCert(cn)
		if !known {
			rl, known = rule{name: "the client certificate " + strconv.Quote(cn) + ", which no rule names,"}, true
		}
	}
	if !known {
		w.Header().Set("WWW-Authenticate", `Bearer realm="leasehold"`)
		msg := "this server needs a bearer token (Authorization: Bearer TOKEN)"
		switch {
		case bearer:
			msg = "the bearer token is not one this server accepts (revoked, or mistyped)"
		case s.opts.Tokens.certRules():
			msg += " or a client certificate signed by a CA it trusts"
		}
		writeError(w, http.StatusUnauthorized, wire.CodeUnauthorized, msg)
		return nil
	}
	return r.WithContext(context.WithValue(r.Context(), ruleKey{}, rl))
}

// verifiedCN returns the subject common name of the client certificate
// the TLS handshake verified, if any.
func verifiedCN(r *http.Request) (string, bool) {
	if r.TLS == nil || len(r.TLS.VerifiedChains) == 0 || len(r.TLS.VerifiedChains[0]) == 0 {
		return "", false
	}
	cn := r.TLS.VerifiedChains[0][0].Subject.CommonName
	return cn, cn != ""
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
