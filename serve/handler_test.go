package serve

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/internal/wire"
)

const owner = "0123456789abcdef0123456789abcdef"

// TestBadInput: every malformed request gets a JSON error naming the
// problem, with the right status, and leaves nothing held.
func TestBadInput(t *testing.T) {
	long := `{"key":"k","owner":"o-owner-0123456789","ttl_ms":1000,"label":"` + strings.Repeat("x", MaxBodyBytes) + `"}`
	tests := []struct {
		name, method, target, body string
		status                     int
		code, says                 string
	}{
		{"empty body", "POST", "/v1/acquire", "", 400, wire.CodeBadRequest, "empty"},
		{"malformed JSON", "POST", "/v1/acquire", `{"key":`, 400, wire.CodeBadRequest, "malformed JSON"},
		{"syntax error", "POST", "/v1/acquire", `{"key" "k"}`, 400, wire.CodeBadRequest, "malformed JSON at byte"},
		{"two values", "POST", "/v1/acquire", `{"key":"k","owner":"o-owner-0123456789","ttl_ms":1000} {}`, 400, wire.CodeBadRequest, "more than one"},
		{"unknown field", "POST", "/v1/acquire", `{"key":"k","owner":"o-owner-0123456789","ttl_ms":1000,"tll":1}`, 400, wire.CodeBadRequest, `unknown field "tll"`},
		{"wrong type", "POST", "/v1/acquire", `{"key":"k","owner":"o-owner-0123456789","ttl_ms":"1s"}`, 400, wire.CodeBadRequest, `"ttl_ms"`},
		{"token as number", "POST", "/v1/release", `{"key":"k","owner":"o-owner-0123456789","token":1}`, 400, wire.CodeBadRequest, "token"},
		{"oversized", "POST", "/v1/acquire", long, 413, wire.CodeTooLarge, "longer than"},
		{"empty key", "POST", "/v1/acquire", `{"key":"","owner":"o-owner-0123456789","ttl_ms":1000}`, 400, wire.CodeInvalidKey, "empty"},
		{"control key", "POST", "/v1/acquire", `{"key":"a\u0000b","owner":"o-owner-0123456789","ttl_ms":1000}`, 400, wire.CodeInvalidKey, "control byte"},
		{"long key", "POST", "/v1/acquire", `{"key":"` + strings.Repeat("k", 1025) + `","owner":"o-owner-0123456789","ttl_ms":1000}`, 400, wire.CodeInvalidKey, "longer than"},
		{"empty owner", "POST", "/v1/acquire", `{"key":"k","owner":"","ttl_ms":1000}`, 400, wire.CodeInvalidKey, "owner"},
		{"short owner", "POST", "/v1/acquire", `{"key":"k","owner":"worker-1","ttl_ms":1000}`, 400, wire.CodeBadRequest, "owner: 8 bytes; an owner id is 16 to 256 bytes"},
		{"long owner", "POST", "/v1/acquire", `{"key":"k","owner":"` + strings.Repeat("o", 257) + `","ttl_ms":1000}`, 400, wire.CodeBadRequest, "owner: 257 bytes"},
		{"zero TTL", "POST", "/v1/acquire", `{"key":"k","owner":"o-owner-0123456789"}`, 400, wire.CodeInvalidTTL, "not positive"},
		{"negative TTL", "POST", "/v1/acquire", `{"key":"k","owner":"o-owner-0123456789","ttl_ms":-5}`, 400, wire.CodeInvalidTTL, "not positive"},
		{"huge TTL", "POST", "/v1/acquire", `{"key":"k","owner":"o-owner-0123456789","ttl_ms":9223372036854775807}`, 400, wire.CodeInvalidTTL, "above the maximum"},
		{"negative wait", "POST", "/v1/acquire", `{"key":"k","owner":"o-owner-0123456789","ttl_ms":1000,"wait_ms":-1}`, 400, wire.CodeInvalidWait, "negative"},
		{"renew zero token", "POST", "/v1/renew", `{"key":"k","owner":"o-owner-0123456789","token":"0","ttl_ms":1000}`, 404, wire.CodeNotHeld, "token 0"},
		{"renew no TTL", "POST", "/v1/renew", `{"key":"k","owner":"o-owner-0123456789","token":"1"}`, 400, wire.CodeInvalidTTL, "not positive"},
		{"release no owner", "POST", "/v1/release", `{"key":"k","token":"1"}`, 404, wire.CodeNotHeld, "owner id is empty"},
		{"release key alone", "POST", "/v1/release", `{"key":"k"}`, 404, wire.CodeNotHeld, "token 0"},
		{"holder no key", "GET", "/v1/holder", "", 400, wire.CodeInvalidKey, "empty"},
		{"holder twice", "GET", "/v1/holder?key=a&key=b", "", 400, wire.CodeBadRequest, "2 times"},
		{"holder unknown param", "GET", "/v1/holder?key=a&owner=b", "", 400, wire.CodeBadRequest, `"owner"`},
		{"holder bad query", "GET", "/v1/holder?key=%zz", "", 400, wire.CodeBadRequest, "malformed query"},
		{"holder free", "GET", "/v1/holder?key=free", "", 404, wire.CodeNotHeld, "not held"},
		{"list bad prefix", "GET", "/v1/list?prefix=%00", "", 400, wire.CodeInvalidKey, "control byte"},
		{"watch bad mode", "GET", "/v1/watch?key=k&mode=poll", "", 400, wire.CodeBadRequest, "poll"},
		{"watch native on memory", "GET", "/v1/watch?key=k&mode=watch", "", 501, wire.CodeNotImplemented, "no native watch"},
		{"no route", "GET", "/v2/acquire", "", 404, wire.CodeNotFound, "/v2/acquire"},
		{"wrong method", "GET", "/v1/acquire", "", 405, wire.CodeMethod, "use POST"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, st := newServer(t)
			w := do(t, s, tc.method, tc.target, tc.body)
			e := errorOf(t, w)
			if w.Code != tc.status || e.Code != tc.code || !strings.Contains(e.Message, tc.says) {
				t.Errorf("got %d %s %q, want %d %s saying %q", w.Code, e.Code, e.Message, tc.status, tc.code, tc.says)
			}
			if hs, err := st.List(context.Background(), ""); err != nil || len(hs) != 0 {
				t.Errorf("a refused request left holders %v (%v)", hs, err)
			}
		})
	}
}

// TestLifecycle: acquire, holder, renew and release through the handler;
// another owner is refused with the holder named but never its owner id.
func TestLifecycle(t *testing.T) {
	s, _ := newServer(t)
	g := acquire(t, s, "jobs/a", owner)
	if g.Token == 0 || g.Owner != owner || g.Handle == "" || g.TTLMs != 60000 {
		t.Fatalf("grant %+v: want a token, the owner, a handle (memory grants are bound) and the TTL", g)
	}
	w := do(t, s, "POST", "/v1/acquire", `{"key":"jobs/a","owner":"other-owner-owner-012345","ttl_ms":1000}`)
	e := errorOf(t, w)
	if w.Code != http.StatusConflict || e.Code != wire.CodeHeld || e.Holder == nil || e.Holder.Token != g.Token || e.Holder.Label != "test" {
		t.Fatalf("second acquire: %d %+v, want 409 held naming the holder", w.Code, e)
	}
	for _, target := range []string{"/v1/holder?key=jobs/a", "/v1/list?prefix=jobs/"} {
		w := do(t, s, "GET", target, "")
		if w.Code != http.StatusOK || !strings.Contains(w.Body.String(), `"token":"1"`) || strings.Contains(w.Body.String(), owner) {
			t.Errorf("%s: %d %s, want the holder with its token and without its owner id", target, w.Code, w.Body)
		}
	}
	renew := wire.GrantRequest{Key: g.Key, Owner: g.Owner, Token: g.Token, TTLMs: 30000, Handle: g.Handle}
	if w := do(t, s, "POST", "/v1/renew", jsonOf(t, renew)); w.Code != http.StatusOK || !strings.Contains(w.Body.String(), `"ttl_ms":30000`) {
		t.Fatalf("renew: %d %s", w.Code, w.Body)
	}
	bad := []wire.GrantRequest{
		{Key: g.Key, Owner: "someone-else-owner-01234", Token: g.Token, Handle: g.Handle},
		{Key: g.Key, Owner: g.Owner, Token: g.Token + 1, Handle: g.Handle},
		{Key: "jobs/b", Owner: g.Owner, Token: g.Token, Handle: g.Handle},
	}
	for _, b := range bad {
		for _, op := range []string{"renew", "release"} {
			b.TTLMs = 1000
			w := do(t, s, "POST", "/v1/"+op, jsonOf(t, b))
			if e := errorOf(t, w); w.Code != http.StatusNotFound || e.Code != wire.CodeNotHeld || strings.Contains(w.Body.String(), owner) {
				t.Errorf("%s of %+v: %d %+v, want 404 not_held without the owner id", op, b, w.Code, e)
			}
		}
	}
	// A grant rebuilt from its key, owner and token (the CLI's one-shot
	// renew and release) is found without its handle.
	rebuilt := wire.GrantRequest{Key: g.Key, Owner: g.Owner, Token: g.Token, TTLMs: 30000}
	if w := do(t, s, "POST", "/v1/renew", jsonOf(t, rebuilt)); w.Code != http.StatusOK || !strings.Contains(w.Body.String(), g.Handle) {
		t.Fatalf("renew of the rebuilt grant: %d %s, want it renewed under its handle", w.Code, w.Body)
	}
	rebuilt.TTLMs = 0
	if w := do(t, s, "POST", "/v1/release", jsonOf(t, rebuilt)); w.Code != http.StatusNoContent {
		t.Fatalf("release: %d %s", w.Code, w.Body)
	}
	if w := do(t, s, "GET", "/v1/holder?key=jobs/a", ""); w.Code != http.StatusNotFound {
		t.Errorf("holder after release: %d %s", w.Code, w.Body)
	}
	if n := s.bound.len(); n != 0 {
		t.Errorf("the server still keeps %d grants after the release", n)
	}
}

// TestInfo: the backend's Info and the capabilities of the server over it.
func TestInfo(t *testing.T) {
	s, _ := newServer(t)
	w := do(t, s, "GET", "/v1/info", "")
	var i wire.Info
	if err := json.Unmarshal(w.Body.Bytes(), &i); err != nil || w.Code != 200 {
		t.Fatalf("info: %d %s (%v)", w.Code, w.Body, err)
	}
	want := wire.Info{Name: "memory", MinTTLMs: 1, MaxTTLMs: leasehold.MaxTTL.Milliseconds(), SafeTokens: true,
		Capabilities: wire.Capabilities{Notify: true, List: true, RenewMany: true, WatchPrefix: true}}
	if i != want {
		t.Errorf("info %+v, want %+v", i, want)
	}
}

// TestAcquireWaits: an acquire with wait_ms gets the key when its holder
// releases it through the server.
func TestAcquireWaits(t *testing.T) {
	s, _ := newServer(t)
	g := acquire(t, s, "k", owner)
	done := make(chan wire.Grant)
	go func() {
		w := do(t, s, "POST", "/v1/acquire", `{"key":"k","owner":"waiter-owner-0123456789","ttl_ms":1000,"wait_ms":30000}`)
		var ng wire.Grant
		_ = json.Unmarshal(w.Body.Bytes(), &ng)
		done <- ng
	}()
	rel := wire.GrantRequest{Key: g.Key, Owner: g.Owner, Token: g.Token, Handle: g.Handle}
	if w := do(t, s, "POST", "/v1/release", jsonOf(t, rel)); w.Code != http.StatusNoContent {
		t.Fatalf("release: %d %s", w.Code, w.Body)
	}
	if ng := <-done; ng.Owner != "waiter-owner-0123456789" || ng.Token != g.Token+1 {
		t.Errorf("the waiter got %+v, want the key with token %d", ng, g.Token+1)
	}
}

// TestAcquireWaitEndsWithClient: a waiting acquire ends when its client
// goes away, and holds nothing.
func TestAcquireWaitEndsWithClient(t *testing.T) {
	s, st := newServer(t)
	acquire(t, s, "k", owner)
	ctx, cancel := context.WithCancel(context.Background())
	r, _ := http.NewRequestWithContext(ctx, "POST", "/v1/acquire", strings.NewReader(`{"key":"k","owner":"waiter-owner-0123456789","ttl_ms":1000,"wait_ms":30000}`))
	done := make(chan int)
	go func() {
		w := newRecorder()
		s.ServeHTTP(w, r)
		done <- w.Code
	}()
	cancel()
	if code := <-done; code != http.StatusServiceUnavailable {
		t.Errorf("the abandoned wait answered %d", code)
	}
	h, err := st.Holder(context.Background(), "k")
	if err != nil || h.Token != 1 {
		t.Errorf("after the abandoned wait the holder is %+v (%v), want the first grant", h, err)
	}
}

// TestRestartEndsBoundGrants: a new server over the same store does not
// have the old one's handles: the renewal is refused with not_held.
func TestRestartEndsBoundGrants(t *testing.T) {
	s, st := newServer(t)
	g := acquire(t, s, "k", owner)
	s2 := New(st, nil)
	defer s2.Close()
	w := do(t, s2, "POST", "/v1/renew", jsonOf(t, wire.GrantRequest{Key: g.Key, Owner: g.Owner, Token: g.Token, TTLMs: 1000, Handle: g.Handle}))
	if e := errorOf(t, w); w.Code != http.StatusNotFound || !strings.Contains(e.Message, "restarted") {
		t.Errorf("renew on a restarted server: %d %+v", w.Code, e)
	}
}

// TestSweepReleasesAbandonedGrants: a bound grant whose TTL passed without
// a renewal is released by the server, so a session's lock is not kept
// forever by a client that went away.
func TestSweepReleasesAbandonedGrants(t *testing.T) {
	st := newMemory()
	s := New(st, &Options{Sweep: time.Millisecond})
	defer s.Close()
	w := do(t, s, "POST", "/v1/acquire", `{"key":"k","owner":"o-owner-0123456789","ttl_ms":1}`)
	if w.Code != http.StatusOK {
		t.Fatalf("acquire: %d %s", w.Code, w.Body)
	}
	for s.bound.len() != 0 {
		time.Sleep(time.Millisecond)
	}
	if _, err := st.Holder(context.Background(), "k"); !errors.Is(err, leasehold.ErrNotHeld) {
		t.Errorf("after the sweep: %v", err)
	}
}

// TestSlowBody: a client that does not send its body in time gets 408 and
// holds nothing.
func TestSlowBody(t *testing.T) {
	st := newMemory()
	s := New(st, &Options{BodyTimeout: 50 * time.Millisecond})
	defer s.Close()
	hs := httptest.NewServer(s)
	defer hs.Close()
	conn, err := net.Dial("tcp", hs.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprint(conn, "POST /v1/acquire HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{\"key\":")
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var e wire.Error
	if err := json.NewDecoder(resp.Body).Decode(&e); err != nil || resp.StatusCode != http.StatusRequestTimeout || e.Error.Code != wire.CodeTimeout {
		t.Errorf("slow body: %d %+v (%v), want 408 %s", resp.StatusCode, e, err, wire.CodeTimeout)
	}
	if hs, _ := st.List(context.Background(), ""); len(hs) != 0 {
		t.Errorf("the slow request left %v held", hs)
	}
}
