package fence

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"slices"
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

// stallingServer serves a handler behind opts that lands each write (an
// unfenced append of its token, the write the middleware must order) after
// an optional stall: the request with token stallToken signals admitted and
// waits for release before writing.
type stallingServer struct {
	srv      *httptest.Server
	mw       *middleware
	guard    MemoryGuard
	admitted chan struct{}
	release  chan struct{}

	mu     sync.Mutex
	landed []uint64
}

func newStallingServer(t *testing.T, opts MiddlewareOptions, stallToken uint64) *stallingServer {
	s := &stallingServer{admitted: make(chan struct{}), release: make(chan struct{})}
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tok, _ := TokenFrom(r.Context())
		if tok == stallToken {
			close(s.admitted)
			<-s.release
		}
		s.mu.Lock()
		s.landed = append(s.landed, tok)
		s.mu.Unlock()
	})
	s.mw = opts.Wrap(&s.guard, handler).(*middleware)
	s.srv = httptest.NewServer(s.mw)
	t.Cleanup(s.srv.Close)
	return s
}

// put sends a fenced PUT to /res and returns its status.
func (s *stallingServer) put(t *testing.T, tok string) int {
	req, _ := http.NewRequest(http.MethodPut, s.srv.URL+"/res", nil)
	req.Header.Set(Header, tok)
	resp, err := s.srv.Client().Do(req)
	if err != nil {
		t.Error(err)
		return 0
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

// staleWrites counts writes that landed after a write with a higher token.
func (s *stallingServer) staleWrites() (int, []uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n, highest := 0, uint64(0)
	for _, tok := range s.landed {
		if tok < highest {
			n++
		}
		highest = max(highest, tok)
	}
	return n, append([]uint64(nil), s.landed...)
}

// TestMiddlewareDefaultSerializes: with the default options, holder 5 is
// admitted and stalls before its write; holder 6 must not be admitted until
// holder 5's handler has returned, so the writes land in token order and
// holder 6's is the last. Without the per-resource lock, holder 6 is
// admitted and writes at once and holder 5's write lands after it.
func TestMiddlewareDefaultSerializes(t *testing.T) {
	s := newStallingServer(t, MiddlewareOptions{}, 5)
	var wg sync.WaitGroup
	codes := make([]int, 2)
	wg.Go(func() { codes[0] = s.put(t, "5") })
	<-s.admitted
	done6 := make(chan struct{})
	wg.Go(func() {
		defer close(done6)
		codes[1] = s.put(t, "6")
	})
	// Wait until holder 6 is either queued behind holder 5 (the lock has
	// two users) or finished (it was let through while 5 stalled).
	queued := false
	for !queued {
		select {
		case <-done6:
			close(s.release)
			wg.Wait()
			n, landed := s.staleWrites()
			t.Fatalf("holder 6 was admitted and answered %d while holder 5 stalled after its admission; writes landed in the order %v (%d stale)", codes[1], landed, n)
		default:
			queued = s.mw.locks.users("/res") == 2
			runtime.Gosched()
		}
	}
	if h, _ := s.guard.Highest("/res"); h != 5 {
		t.Fatalf("holder 6 was admitted while holder 5's handler ran (highest %d)", h)
	}
	close(s.release)
	wg.Wait()
	if codes[0] != 200 || codes[1] != 200 {
		t.Fatalf("codes %v; want both admitted", codes)
	}
	if n, landed := s.staleWrites(); n != 0 || len(landed) != 2 || landed[1] != 6 {
		t.Fatalf("writes landed in the order %v (%d stale); want [5 6]", landed, n)
	}
	// A late request from holder 5 is now refused.
	if code := s.put(t, "5"); code != 409 {
		t.Fatalf("late stale request: %d; want 409", code)
	}
}

// TestMiddlewareUnsafeConcurrentRace is the negative control: with
// UnsafeConcurrent, the same interleaving lets the stalled holder 5 write
// after holder 6, which is why the option says it is unsafe.
func TestMiddlewareUnsafeConcurrentRace(t *testing.T) {
	s := newStallingServer(t, MiddlewareOptions{UnsafeConcurrent: true}, 5)
	var wg sync.WaitGroup
	wg.Go(func() {
		if code := s.put(t, "5"); code != 200 {
			t.Errorf("holder 5: %d", code)
		}
	})
	<-s.admitted
	if code := s.put(t, "6"); code != 200 {
		t.Fatalf("holder 6: %d", code)
	}
	close(s.release)
	wg.Wait()
	if n, landed := s.staleWrites(); n != 1 || !slices.Equal(landed, []uint64{6, 5}) {
		t.Fatalf("writes landed in the order %v (%d stale); want [6 5], the lost update this test demonstrates", landed, n)
	}
	if s.mw.locks.users("/res") != 0 {
		t.Fatal("UnsafeConcurrent took the resource lock")
	}
}

// TestMiddlewareHandlerFailureKeepsToken: the token is recorded at
// admission, so a handler that fails does not let an older token in.
func TestMiddlewareHandlerFailureKeepsToken(t *testing.T) {
	var g MemoryGuard
	h := Middleware(&g, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "disk full", http.StatusInternalServerError)
	}))
	if rec := serve(h, "/r", "7"); rec.Code != 500 {
		t.Fatalf("failing handler: %d", rec.Code)
	}
	if rec := serve(h, "/r", "6"); rec.Code != 409 {
		t.Fatalf("older token after a failed write: %d; want 409", rec.Code)
	}
	if rec := serve(h, "/r", "7"); rec.Code != 500 {
		t.Fatalf("the same token again: %d; want it admitted (and the handler's 500)", rec.Code)
	}
}

// TestMiddlewareGiveUp: a request whose context ends while it waits for
// the resource's lock is answered 503 and never reaches the guard.
func TestMiddlewareGiveUp(t *testing.T) {
	stall := make(chan struct{})
	inHandler := make(chan struct{})
	var g MemoryGuard
	mw := Middleware(&g, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
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
