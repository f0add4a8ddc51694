package serve

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/leasehold-go/leasehold/internal/wire"
	"github.com/leasehold-go/leasehold/memory"
)

// newServer returns a server over a new memory store, closed when t ends.
func newServer(t testing.TB) (*Server, *memory.Store) {
	t.Helper()
	st := memory.New(nil)
	s := New(st, nil)
	t.Cleanup(func() { _ = s.Close(); _ = st.Close() })
	return s, st
}

// do sends one request to h and returns the recorded answer.
func do(t testing.TB, h http.Handler, method, target, body string) *httptest.ResponseRecorder {
	t.Helper()
	r := httptest.NewRequestWithContext(context.Background(), method, target, strings.NewReader(body))
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

// errorOf decodes an error answer; it fails t when the body is not one.
func errorOf(t testing.TB, w *httptest.ResponseRecorder) wire.ErrorBody {
	t.Helper()
	var e wire.Error
	if err := json.Unmarshal(w.Body.Bytes(), &e); err != nil || e.Error.Code == "" || e.Error.Message == "" {
		t.Fatalf("answer %d %q is not a JSON error with a code and a message (%v)", w.Code, w.Body.String(), err)
	}
	if ct := w.Header().Get("Content-Type"); ct != "application/json" {
		t.Errorf("error answer's Content-Type is %q", ct)
	}
	return e.Error
}

// acquire acquires key for owner through h and returns the grant.
func acquire(t testing.TB, h http.Handler, key, owner string) wire.Grant {
	t.Helper()
	w := do(t, h, "POST", "/v1/acquire", jsonOf(t, wire.AcquireRequest{Key: key, Owner: owner, Label: "test", TTLMs: 60000}))
	if w.Code != http.StatusOK {
		t.Fatalf("acquire %q: %d %s", key, w.Code, w.Body)
	}
	var g wire.Grant
	if err := json.Unmarshal(w.Body.Bytes(), &g); err != nil {
		t.Fatalf("acquire answer %q: %v", w.Body, err)
	}
	return g
}

func jsonOf(t testing.TB, v any) string {
	t.Helper()
	var b bytes.Buffer
	if err := json.NewEncoder(&b).Encode(v); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func newRecorder() *httptest.ResponseRecorder { return httptest.NewRecorder() }

func newMemory() *memory.Store { return memory.New(nil) }
