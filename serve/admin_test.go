package serve

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/internal/wire"
	"github.com/leasehold-go/leasehold/memory"
)

// readToken may do everything but admin on jobs/.
const readToken = "read-token-0123456789abcdef"

// logFile is the server's log, in a file (writes to an *os.File are safe
// from the server's goroutines).
type logFile string

func (l logFile) String() string {
	b, _ := os.ReadFile(string(l))
	return string(b)
}

// portableStore is a memory store that says its grants are portable, as
// sqlite's are: the server keeps no handle for them.
type portableStore struct{ *memory.Store }

func (p portableStore) Info() leasehold.Info {
	i := p.Store.Info()
	i.PortableGrants = true
	return i
}

// adminServer serves st with the tokens jobs (every verb on jobs/), admin
// (every verb everywhere) and read (no admin), logging to the returned
// buffer.
func adminServer(t *testing.T, st leasehold.Store) (*Server, logFile) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "tokens")
	writeTokens(t, path, "jobs "+jobsToken+" * jobs/\nadmin "+adminToken+" * *\n"+
		"reader "+readToken+" acquire,renew,release,read,watch jobs/\n")
	tokens, err := LoadTokens(path)
	if err != nil {
		t.Fatal(err)
	}
	log := logFile(filepath.Join(t.TempDir(), "serve.log"))
	f, err := os.Create(string(log))
	if err != nil {
		t.Fatal(err)
	}
	s := New(st, &Options{Tokens: tokens, Logger: slog.New(slog.NewTextHandler(f, nil))})
	t.Cleanup(func() { _ = s.Close(); _ = f.Close() })
	return s, log
}

// acquireAs acquires key through s as token's caller and returns the grant.
func acquireAs(t *testing.T, s *Server, token, key, label string) wire.Grant {
	t.Helper()
	w := doAs(t, s, token, "POST", "/v1/acquire", jsonOf(t, wire.AcquireRequest{Key: key, Owner: owner, Label: label, TTLMs: 60000}))
	var g wire.Grant
	if w.Code != http.StatusOK || json.Unmarshal(w.Body.Bytes(), &g) != nil {
		t.Fatalf("acquire %q: %d %s", key, w.Code, w.Body)
	}
	return g
}

// TestBreak: an admin breaks a lease, kept by the server (memory) or
// portable; the answer names it, the audit line says who broke what
// (never a secret), and the old holder's renew is refused with not_held.
func TestBreak(t *testing.T) {
	for name, st := range map[string]leasehold.Store{"kept": memory.New(nil), "portable": portableStore{memory.New(nil)}} {
		t.Run(name, func(t *testing.T) {
			defer st.Close()
			s, log := adminServer(t, st)
			g := acquireAs(t, s, jobsToken, "jobs/nightly", "host-7:42")
			w := doAs(t, s, adminToken, "POST", "/v1/admin/break", `{"key":"jobs/nightly","token":"`+strconv.FormatUint(g.Token, 10)+`"}`)
			var h wire.Holder
			if w.Code != http.StatusOK || json.Unmarshal(w.Body.Bytes(), &h) != nil || h.Token != g.Token || h.Label != "host-7:42" {
				t.Fatalf("break as admin: %d %s, want 200 with the broken lease", w.Code, w.Body)
			}
			line := log.String()
			for _, want := range []string{"lease broken", "by=admin", "key=jobs/nightly", "token=" + strconv.FormatUint(g.Token, 10), "holder=host-7:42"} {
				if !strings.Contains(line, want) {
					t.Errorf("audit log %q lacks %q", line, want)
				}
			}
			for _, secret := range []string{adminToken, jobsToken, owner} {
				if strings.Contains(line, secret) {
					t.Errorf("audit log %q shows a secret", line)
				}
			}
			renew := wire.GrantRequest{Key: g.Key, Owner: g.Owner, Token: g.Token, TTLMs: 60000, Handle: g.Handle}
			w = doAs(t, s, jobsToken, "POST", "/v1/renew", jsonOf(t, renew))
			if e := errorOf(t, w); w.Code != http.StatusNotFound || e.Code != wire.CodeNotHeld {
				t.Errorf("the old holder's renew: %d %+v, want 404 not_held", w.Code, e)
			}
			if _, err := st.Holder(context.Background(), "jobs/nightly"); err == nil {
				t.Error("the key is still held after the break")
			}
		})
	}
}

// TestBreakRefused: without admin on the key (403), without tokens (403:
// nobody to name), on a free key or a token that is no longer current
// (404), and a grant whose owner id the server does not know (501); none
// of them ends a lease or writes an audit line.
func TestBreakRefused(t *testing.T) {
	st := portableStore{memory.New(nil)}
	defer st.Close()
	s, log := adminServer(t, st)
	acquireAs(t, s, jobsToken, "jobs/a", "a")
	acquireAs(t, s, adminToken, "billing/b", "b")
	direct, err := st.Acquire(context.Background(), leasehold.AcquireRequest{Key: "jobs/direct", Owner: owner, TTL: 60e9})
	if err != nil {
		t.Fatal(err)
	}
	open := New(st, nil)
	defer open.Close()
	tests := []struct {
		name   string
		s      *Server
		token  string
		body   string
		status int
		code   string
		says   string
	}{
		{"read token", s, readToken, `{"key":"jobs/a"}`, 403, wire.CodeForbidden, `reader may not admin "jobs/a"`},
		{"other prefix", s, jobsToken, `{"key":"billing/b"}`, 403, wire.CodeForbidden, `jobs may not admin "billing/b"`},
		{"no token", s, "", `{"key":"jobs/a"}`, 401, wire.CodeUnauthorized, "bearer token"},
		{"no tokens configured", open, "", `{"key":"jobs/a"}`, 403, wire.CodeForbidden, "no tokens"},
		{"free key", s, adminToken, `{"key":"jobs/free"}`, 404, wire.CodeNotHeld, "not held"},
		{"stale token", s, adminToken, `{"key":"jobs/a","token":"7"}`, 404, wire.CodeNotHeld, "token 1 holds it now"},
		{"unknown owner", s, adminToken, `{"key":"jobs/direct"}`, 501, wire.CodeNotImplemented, "did not grant it"},
		{"bad key", s, adminToken, `{"key":""}`, 400, wire.CodeInvalidKey, "empty"},
		{"unknown field", s, adminToken, `{"key":"jobs/a","owner":"x-owner-0123456789"}`, 400, wire.CodeBadRequest, `"owner"`},
	}
	for _, tc := range tests {
		w := doAs(t, tc.s, tc.token, "POST", "/v1/admin/break", tc.body)
		if e := errorOf(t, w); w.Code != tc.status || e.Code != tc.code || !strings.Contains(e.Message, tc.says) {
			t.Errorf("%s: %d %+v, want %d %s saying %q", tc.name, w.Code, e, tc.status, tc.code, tc.says)
		}
	}
	for _, key := range []string{"jobs/a", "billing/b", direct.Key} {
		if _, err := st.Holder(context.Background(), key); err != nil {
			t.Errorf("%s after the refused breaks: %v, want still held", key, err)
		}
	}
	if strings.Contains(log.String(), "lease broken") {
		t.Errorf("a refused break was logged as done: %s", log)
	}
}
