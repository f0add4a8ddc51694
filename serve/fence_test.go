package serve

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/leasehold-go/leasehold/internal/wire"
)

// checkFence asks s whether token is key's current grant.
func checkFence(t *testing.T, h http.Handler, key string, token uint64) wire.FenceCheck {
	t.Helper()
	w := do(t, h, "POST", "/v1/fence/check", jsonOf(t, wire.FenceCheckRequest{Key: key, Token: token}))
	if w.Code != http.StatusOK {
		t.Fatalf("fence check %q %d: %d %s", key, token, w.Code, w.Body)
	}
	var out wire.FenceCheck
	if err := json.Unmarshal(w.Body.Bytes(), &out); err != nil {
		t.Fatalf("fence check answer %q: %v", w.Body, err)
	}
	if strings.Contains(w.Body.String(), owner) {
		t.Fatalf("the fence check %q shows the owner id", w.Body)
	}
	return out
}

// release releases g through h.
func release(t *testing.T, h http.Handler, g wire.Grant) {
	t.Helper()
	rel := wire.GrantRequest{Key: g.Key, Owner: g.Owner, Token: g.Token, Handle: g.Handle}
	if w := do(t, h, "POST", "/v1/release", jsonOf(t, rel)); w.Code != http.StatusNoContent {
		t.Fatalf("release of %q: %d %s", g.Key, w.Code, w.Body)
	}
}

// TestFenceCheck: the current grant's token is current; after a release
// and a new grant the older token is not, and the answer names the new
// token and its label; a released key has no current token.
func TestFenceCheck(t *testing.T) {
	s, _ := newServer(t)
	g := acquire(t, s, "jobs/f", owner)
	if got := checkFence(t, s, "jobs/f", g.Token); !got.Current || got.Token != strconv.FormatUint(g.Token, 10) || got.Label != "test" {
		t.Errorf("the current grant's token: %+v, want current with token %d", got, g.Token)
	}
	if got := checkFence(t, s, "jobs/f", g.Token+1); got.Current {
		t.Errorf("a token above the current grant's: %+v, want not current", got)
	}
	release(t, s, g)
	if got := checkFence(t, s, "jobs/f", g.Token); got.Current || got.Token != "" || got.Label != "" {
		t.Errorf("the token of a released key: %+v, want not current and no token", got)
	}
	g2 := acquire(t, s, "jobs/f", owner+"2")
	if g2.Token <= g.Token {
		t.Fatalf("the new grant's token %d is not above %d", g2.Token, g.Token)
	}
	if got := checkFence(t, s, "jobs/f", g.Token); got.Current || got.Token != strconv.FormatUint(g2.Token, 10) {
		t.Errorf("the older token after a new grant: %+v, want not current, token %d", got, g2.Token)
	}
	if got := checkFence(t, s, "jobs/f", g2.Token); !got.Current {
		t.Errorf("the new grant's token: %+v, want current", got)
	}
}

// TestFenceCheckBadInput: a malformed check is refused with 400 naming the
// problem, and a token scoped to jobs/ gets 403 on billing/.
func TestFenceCheckBadInput(t *testing.T) {
	tests := []struct{ name, body, code, says string }{
		{"empty", "", wire.CodeBadRequest, "empty"},
		{"malformed", `{"key":`, wire.CodeBadRequest, "malformed JSON"},
		{"unknown field", `{"key":"k","token":"1","owner":"o-owner-0123456789"}`, wire.CodeBadRequest, `unknown field "owner"`},
		{"token as number", `{"key":"k","token":1}`, wire.CodeBadRequest, "token"},
		{"no token", `{"key":"k"}`, wire.CodeBadRequest, "token"},
		{"empty key", `{"key":"","token":"1"}`, wire.CodeInvalidKey, "empty"},
		{"control key", `{"key":"a\u0001","token":"1"}`, wire.CodeInvalidKey, "control byte"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, _ := newServer(t)
			w := do(t, s, "POST", "/v1/fence/check", tc.body)
			if e := errorOf(t, w); w.Code != http.StatusBadRequest || e.Code != tc.code || !strings.Contains(e.Message, tc.says) {
				t.Errorf("got %d %s %q, want 400 %s saying %q", w.Code, e.Code, e.Message, tc.code, tc.says)
			}
		})
	}
	s, _ := authServer(t)
	w := doAs(t, s, jobsToken, "POST", "/v1/fence/check", `{"key":"billing/x","token":"1"}`)
	if e := errorOf(t, w); w.Code != http.StatusForbidden || e.Code != wire.CodeForbidden {
		t.Errorf("a check on billing/ as jobs: %d %+v, want 403", w.Code, e)
	}
	if w := doAs(t, s, jobsToken, "POST", "/v1/fence/check", `{"key":"jobs/x","token":"1"}`); w.Code != http.StatusOK {
		t.Errorf("a check on jobs/ as jobs: %d %s, want 200", w.Code, w.Body)
	}
}
