package serve

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/leasehold-go/leasehold/internal/wire"
)

const (
	jobsToken  = "jobs-token-0123456789abcdef"
	adminToken = "admin-token-0123456789abcdef"
)

// authServer serves a memory store with a token file: "jobs" may do every
// verb on jobs/, "admin" everything everywhere.
func authServer(t *testing.T) (*Server, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "tokens")
	writeTokens(t, path, "jobs "+jobsToken+" * jobs/\nadmin "+adminToken+" * *\n")
	tokens, err := LoadTokens(path)
	if err != nil {
		t.Fatal(err)
	}
	st := newMemory()
	s := New(st, &Options{Tokens: tokens})
	t.Cleanup(func() { _ = s.Close(); _ = st.Close() })
	return s, path
}

func writeTokens(t *testing.T, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
}

// doAs sends a request with token as its bearer token ("" for none).
func doAs(t *testing.T, s *Server, token, method, target, body string) *httptest.ResponseRecorder {
	t.Helper()
	r := httptest.NewRequestWithContext(context.Background(), method, target, strings.NewReader(body))
	if token != "" {
		r.Header.Set("Authorization", "Bearer "+token)
	}
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	w := flushEnds{httptest.NewRecorder(), cancel} // a watch answers ready and ends
	s.ServeHTTP(w, r.WithContext(ctx))
	return w.ResponseRecorder
}

// everyVerb are requests of every verb on key.
func everyVerb(key string) [][3]string {
	return [][3]string{
		{"POST", "/v1/acquire", `{"key":"` + key + `","owner":"0123456789abcdef0123","ttl_ms":60000}`},
		{"POST", "/v1/renew", `{"key":"` + key + `","owner":"0123456789abcdef0123","token":"1","ttl_ms":60000}`},
		{"POST", "/v1/release", `{"key":"` + key + `","owner":"0123456789abcdef0123","token":"1"}`},
		{"GET", "/v1/holder?key=" + key, ""},
		{"GET", "/v1/list?prefix=" + key, ""},
		{"GET", "/v1/watch?key=" + key, ""},
		{"POST", "/v1/admin/break", `{"key":"` + key + `"}`},
		{"POST", "/v1/fence/check", `{"key":"` + key + `","token":"1"}`},
	}
}

// TestScopedTokenForbiddenElsewhere: a client scoped to jobs/ gets 403 on
// billing/ for every verb (and on a list of every key), and is let
// through on jobs/.
func TestScopedTokenForbiddenElsewhere(t *testing.T) {
	s, _ := authServer(t)
	for _, req := range append(everyVerb("billing/x"), [3]string{"GET", "/v1/list", ""}) {
		w := doAs(t, s, jobsToken, req[0], req[1], req[2])
		if e := errorOf(t, w); w.Code != http.StatusForbidden || e.Code != wire.CodeForbidden || !strings.Contains(e.Message, "jobs may not") {
			t.Errorf("%s %s as jobs: %d %+v, want 403 forbidden", req[0], req[1], w.Code, e)
		}
	}
	for _, req := range everyVerb("jobs/x") {
		if w := doAs(t, s, jobsToken, req[0], req[1], req[2]); w.Code == http.StatusForbidden || w.Code == http.StatusUnauthorized {
			t.Errorf("%s %s as jobs: %d %s, want it let through", req[0], req[1], w.Code, w.Body)
		}
	}
	if w := doAs(t, s, jobsToken, "GET", "/v1/info", ""); w.Code != http.StatusOK {
		t.Errorf("info as jobs: %d %s", w.Code, w.Body)
	}
}

// TestNoCredentialsUnauthorized: no token, or an unknown one, gets 401 on
// every route but the OpenAPI document.
func TestNoCredentialsUnauthorized(t *testing.T) {
	s, _ := authServer(t)
	for _, token := range []string{"", "not-a-token-0123456789abcdef"} {
		for _, req := range append(everyVerb("jobs/x"), [3]string{"GET", "/v1/info", ""}) {
			w := doAs(t, s, token, req[0], req[1], req[2])
			if e := errorOf(t, w); w.Code != http.StatusUnauthorized || e.Code != wire.CodeUnauthorized || w.Header().Get("WWW-Authenticate") == "" {
				t.Errorf("%s %s with token %q: %d %+v, want 401", req[0], req[1], token, w.Code, e)
			}
		}
	}
	if w := doAs(t, s, "", "GET", "/v1/openapi.json", ""); w.Code != http.StatusOK {
		t.Errorf("the OpenAPI document without a token: %d", w.Code)
	}
}

// TestRevokedTokenAfterReload: a token removed from the file stops working
// once the file is loaded again; a malformed file keeps the rules it had.
func TestRevokedTokenAfterReload(t *testing.T) {
	s, path := authServer(t)
	if w := doAs(t, s, jobsToken, "GET", "/v1/holder?key=jobs/x", ""); w.Code != http.StatusNotFound {
		t.Fatalf("holder as jobs before the reload: %d %s", w.Code, w.Body)
	}
	writeTokens(t, path, "admin "+adminToken+" bogus *\n")
	if err := s.opts.Tokens.Load(path); err == nil || strings.Contains(err.Error(), adminToken) {
		t.Fatalf("loading a file with an unknown verb: %v, want an error without the token", err)
	}
	if w := doAs(t, s, jobsToken, "GET", "/v1/holder?key=jobs/x", ""); w.Code != http.StatusNotFound {
		t.Fatalf("holder as jobs after a failed reload: %d %s, want the old rules", w.Code, w.Body)
	}
	writeTokens(t, path, "admin "+adminToken+" * *\n")
	if err := s.opts.Tokens.Load(path); err != nil {
		t.Fatal(err)
	}
	if w := doAs(t, s, jobsToken, "GET", "/v1/holder?key=jobs/x", ""); w.Code != http.StatusUnauthorized {
		t.Errorf("holder with the revoked token: %d %s, want 401", w.Code, w.Body)
	}
}

// TestOthersGrantNotReleasable: a token that may release a key still needs
// the grant's owner id: it cannot end another client's grant.
func TestOthersGrantNotReleasable(t *testing.T) {
	s, _ := authServer(t)
	w := doAs(t, s, adminToken, "POST", "/v1/acquire", `{"key":"jobs/x","owner":"admin-owner-0123456789","ttl_ms":60000}`)
	if w.Code != http.StatusOK {
		t.Fatalf("acquire: %d %s", w.Code, w.Body)
	}
	w = doAs(t, s, jobsToken, "POST", "/v1/release", `{"key":"jobs/x","owner":"guessed-owner-0123456789","token":"1"}`)
	if e := errorOf(t, w); w.Code != http.StatusNotFound || e.Code != wire.CodeNotHeld {
		t.Errorf("release of another's grant: %d %+v, want 404 not_held", w.Code, e)
	}
	if w := doAs(t, s, jobsToken, "GET", "/v1/holder?key=jobs/x", ""); w.Code != http.StatusOK {
		t.Errorf("the grant after the attempt: %d %s, want still held", w.Code, w.Body)
	}
}

// TestTokenFileRefusals: a malformed token file is refused naming the line
// and never showing a token.
func TestTokenFileRefusals(t *testing.T) {
	tests := []struct{ text, says string }{
		{"a 0123456789abcdef0\n", "want NAME TOKEN VERBS PREFIX"},
		{"a short * *\n", "shorter than 16"},
		{"a 0123456789abcdef0 read,fly *\n", `unknown verb "fly"`},
		{"a 0123456789abcdef0 * *\na 0123456789abcdef1 * *\n", "given twice"},
		{"a 0123456789abcdef0 * *\nb 0123456789abcdef0 * *\n", "line 2 (b): the same token as a"},
	}
	for _, tc := range tests {
		_, err := parseTokens(strings.NewReader(tc.text))
		if err == nil || !strings.Contains(err.Error(), tc.says) || strings.Contains(err.Error(), "0123456789abcdef") {
			t.Errorf("%q: %v, want an error saying %q without the token", tc.text, err, tc.says)
		}
	}
}
