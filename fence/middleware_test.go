package fence

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// echoHandler answers 200 with the token it found in the context.
var echoHandler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	tok, ok := TokenFrom(r.Context())
	fmt.Fprintf(w, "token=%d ok=%v", tok, ok)
})

func serve(h http.Handler, path string, headers ...string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(http.MethodPut, path, nil)
	for _, v := range headers {
		req.Header.Add(Header, v)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

func TestMiddlewareStatuses(t *testing.T) {
	var g MemoryGuard
	h := Middleware(&g, echoHandler)
	steps := []struct {
		name    string
		path    string
		headers []string
		code    int
		body    string // substring
	}{
		{"missing", "/a", nil, 400, "no Fencing-Token header"},
		{"empty", "/a", []string{""}, 400, "malformed fencing token"},
		{"negative", "/a", []string{"-1"}, 400, "malformed"},
		{"garbage", "/a", []string{"abc"}, 400, `"abc" is not a decimal number`},
		{"overflow", "/a", []string{"99999999999999999999"}, 400, "out of the uint64 range"},
		{"two headers", "/a", []string{"5", "6"}, 400, "2 Fencing-Token headers"},
		{"list", "/a", []string{"5, 6"}, 400, "malformed"},
		{"first", "/a", []string{"5"}, 200, "token=5 ok=true"},
		{"equal", "/a", []string{"5"}, 200, "token=5 ok=true"},
		{"stale", "/a", []string{"4"}, 409, "stale fencing token 4 for /a: a newer holder wrote with token 5"},
		{"newer", "/a", []string{"7"}, 200, "token=7 ok=true"},
		{"old again", "/a", []string{"5"}, 409, "with token 7"},
		{"other path", "/b", []string{"1"}, 200, "token=1"},
		{"leading zeros", "/a", []string{"0007"}, 200, "token=7"},
	}
	for _, s := range steps {
		rec := serve(h, s.path, s.headers...)
		if rec.Code != s.code || !strings.Contains(rec.Body.String(), s.body) {
			t.Errorf("%s: got %d %q; want %d containing %q", s.name, rec.Code, rec.Body.String(), s.code, s.body)
		}
		if s.code != 200 && !strings.HasPrefix(rec.Header().Get("Content-Type"), "text/plain") {
			t.Errorf("%s: Content-Type %q", s.name, rec.Header().Get("Content-Type"))
		}
	}
	if h, _ := g.Highest("/a"); h != 7 {
		t.Errorf("guard's highest for /a = %d; want 7 (refused tokens must not be recorded)", h)
	}
}

func TestMiddlewareAllowMissing(t *testing.T) {
	var g MemoryGuard
	h := MiddlewareOptions{AllowMissing: true}.Wrap(&g, echoHandler)
	if rec := serve(h, "/a"); rec.Code != 200 || rec.Body.String() != "token=0 ok=false" {
		t.Fatalf("missing header with AllowMissing: %d %q", rec.Code, rec.Body.String())
	}
	if _, ok := g.Highest("/a"); ok {
		t.Fatal("a request without a token reached the guard")
	}
	if rec := serve(h, "/a", "x"); rec.Code != 400 {
		t.Fatalf("malformed header with AllowMissing: %d", rec.Code)
	}
	if rec := serve(h, "/a", "3"); rec.Code != 200 {
		t.Fatalf("valid header with AllowMissing: %d", rec.Code)
	}
	if rec := serve(h, "/a", "2"); rec.Code != 409 {
		t.Fatalf("stale header with AllowMissing: %d", rec.Code)
	}
}

func TestMiddlewareResource(t *testing.T) {
	var g MemoryGuard
	h := MiddlewareOptions{
		Resource: func(r *http.Request) string { return r.URL.Query().Get("account") },
	}.Wrap(&g, echoHandler)
	if rec := serve(h, "/x?account=1", "5"); rec.Code != 200 {
		t.Fatal(rec.Code)
	}
	// A different path, same account: same resource.
	if rec := serve(h, "/y?account=1", "4"); rec.Code != 409 || !strings.Contains(rec.Body.String(), "for 1:") {
		t.Fatalf("%d %q", rec.Code, rec.Body.String())
	}
	if rec := serve(h, "/x?account=2", "4"); rec.Code != 200 {
		t.Fatal(rec.Code)
	}
}

func TestMiddlewareGuardFailure(t *testing.T) {
	secret := errors.New("dial tcp 10.0.0.7:5432: password authentication failed")
	g := GuardFunc(func(context.Context, string, uint64) error { return secret })
	rec := serve(Middleware(g, echoHandler), "/a", "1")
	if rec.Code != http.StatusInternalServerError {
		t.Fatalf("code %d", rec.Code)
	}
	if strings.Contains(rec.Body.String(), "10.0.0.7") {
		t.Fatalf("the 500 body leaks the guard's error: %q", rec.Body.String())
	}

	var got error
	custom := MiddlewareOptions{Error: func(w http.ResponseWriter, r *http.Request, err error) {
		got = err
		w.WriteHeader(http.StatusTeapot)
	}}.Wrap(g, echoHandler)
	if rec := serve(custom, "/a", "1"); rec.Code != http.StatusTeapot || got != secret {
		t.Fatalf("custom Error: code %d, err %v", rec.Code, got)
	}
}

func TestMiddlewareNilArguments(t *testing.T) {
	for name, f := range map[string]func(){
		"guard": func() { Middleware(nil, echoHandler) },
		"next":  func() { Middleware(&MemoryGuard{}, nil) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("nil %s: no panic", name)
				}
			}()
			f()
		}()
	}
}

func TestStatusCode(t *testing.T) {
	tests := []struct {
		err  error
		want int
	}{
		{nil, 200},
		{ErrMissingToken, 400},
		{fmt.Errorf("x: %w", ErrMalformedToken), 400},
		{&StaleError{Token: 1}, 409},
		{fmt.Errorf("wrapped: %w", &StaleError{Token: 1}), 409},
		{context.Canceled, 503},
		{fmt.Errorf("x: %w", context.DeadlineExceeded), 503},
		{errors.New("boom"), 500},
		{ErrNoRow, 500},
	}
	for _, tt := range tests {
		if got := StatusCode(tt.err); got != tt.want {
			t.Errorf("StatusCode(%v) = %d; want %d", tt.err, got, tt.want)
		}
	}
}

// TestMiddlewareSerialize shows the race that Serialize closes. Holder 5 is
// admitted and its handler stalls before writing; holder 6 arrives. With
// Serialize, holder 6 waits until holder 5's write is done, so the register
// ends with 6's value; both writes are accepted in token order.
func TestMiddlewareSerialize(t *testing.T) {
	var reg Register[string]
	stall := make(chan struct{})
	inHandler := make(chan struct{})
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tok, _ := TokenFrom(r.Context())
		if tok == 5 {
			close(inHandler)
			<-stall
		}
		// The handler's write is not fenced on purpose: only the
		// middleware's serialization keeps the order.
		reg.Write(0, fmt.Sprint("written by ", tok))
	})
	var g MemoryGuard
	mw := MiddlewareOptions{Serialize: true}.Wrap(&g, handler)
	srv := httptest.NewServer(mw)
	defer srv.Close()

	put := func(tok string) (int, error) {
		req, _ := http.NewRequest(http.MethodPut, srv.URL+"/res", nil)
		req.Header.Set(Header, tok)
		resp, err := srv.Client().Do(req)
		if err != nil {
			return 0, err
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode, nil
	}

	var wg sync.WaitGroup
	codes := make([]int, 2)
	wg.Add(1)
	go func() {
		defer wg.Done()
		codes[0], _ = put("5")
	}()
	<-inHandler
	wg.Add(1)
	go func() {
		defer wg.Done()
		codes[1], _ = put("6")
	}()
	// Wait until holder 6 is queued on the resource's lock.
	waitUsers(t, &mw.(*middleware).locks, "/res", 2)
	if h, _ := g.Highest("/res"); h != 5 {
		t.Fatalf("holder 6 was admitted while holder 5's handler ran (highest %d)", h)
	}
	close(stall)
	wg.Wait()
	if codes[0] != 200 || codes[1] != 200 {
		t.Fatalf("codes %v", codes)
	}
	if v, _, _ := reg.Read(); v != "written by 6" {
		t.Fatalf("register holds %q; want the newer holder's value", v)
	}

	// A late request from holder 5 is now refused.
	if code, err := put("5"); err != nil || code != 409 {
		t.Fatalf("late stale request: %d %v", code, err)
	}
}

// TestMiddlewareSerializeGiveUp: a request whose context ends while it waits
// for the resource's lock is answered 503 and never reaches the guard.
func TestMiddlewareSerializeGiveUp(t *testing.T) {
	stall := make(chan struct{})
	inHandler := make(chan struct{})
	var g MemoryGuard
	mw := MiddlewareOptions{Serialize: true}.Wrap(&g, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		close(inHandler)
		<-stall
	}))
	done := make(chan struct{})
	go func() {
		defer close(done)
		serve(mw, "/r", "1")
	}()
	<-inHandler

	ctx, cancel := context.WithCancel(context.Background())
	req := httptest.NewRequest(http.MethodPut, "/r", nil).WithContext(ctx)
	req.Header.Set(Header, "2")
	rec := httptest.NewRecorder()
	served := make(chan struct{})
	go func() {
		defer close(served)
		mw.ServeHTTP(rec, req)
	}()
	waitUsers(t, &mw.(*middleware).locks, "/r", 2)
	cancel()
	<-served
	if rec.Code != http.StatusServiceUnavailable || !strings.Contains(rec.Body.String(), "gave up waiting") {
		t.Fatalf("got %d %q", rec.Code, rec.Body.String())
	}
	if h, _ := g.Highest("/r"); h != 1 {
		t.Fatalf("highest = %d; the abandoned request must not be admitted", h)
	}
	close(stall)
	<-done
}

// TestMiddlewareUnserializedRace documents why Serialize (or a fenced write
// in the handler) is needed: without it, a stalled older holder overwrites
// a newer holder's unfenced write.
func TestMiddlewareUnserializedRace(t *testing.T) {
	var reg Register[string]
	stall := make(chan struct{})
	inHandler := make(chan struct{})
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tok, _ := TokenFrom(r.Context())
		if tok == 5 {
			close(inHandler)
			<-stall
		}
		reg.Write(0, fmt.Sprint("written by ", tok))
	})
	var g MemoryGuard
	h := Middleware(&g, handler)
	done := make(chan struct{})
	go func() {
		defer close(done)
		serve(h, "/res", "5")
	}()
	<-inHandler
	if rec := serve(h, "/res", "6"); rec.Code != 200 {
		t.Fatal(rec.Code)
	}
	close(stall)
	<-done
	if v, _, _ := reg.Read(); v != "written by 5" {
		t.Fatalf("register holds %q; expected the lost update this test demonstrates", v)
	}
}
