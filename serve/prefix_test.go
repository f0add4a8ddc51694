package serve

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/internal/wire"
	"github.com/leasehold-go/leasehold/memory"
)

// openStream GETs target from hs and returns a reader of its events
// ("event: x|data: y", comments skipped); the stream ends with the test.
func openStream(t *testing.T, hs *httptest.Server, target string) func() string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	req, _ := http.NewRequestWithContext(ctx, "GET", hs.URL+target, nil)
	resp, err := hs.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("GET %s: %d %s", target, resp.StatusCode, b)
	}
	lines := bufio.NewScanner(resp.Body)
	return func() string {
		var ev []string
		for lines.Scan() {
			switch l := lines.Text(); {
			case l == "" && len(ev) > 0:
				return strings.Join(ev, "|")
			case l != "" && !strings.HasPrefix(l, ":"):
				ev = append(ev, l)
			}
		}
		return "end: " + strings.Join(ev, "|")
	}
}

func prefixServer(t *testing.T, poll time.Duration) (*Server, *memory.Store, *httptest.Server) {
	t.Helper()
	st := memory.New(nil)
	s := New(st, &Options{PrefixPoll: poll})
	hs := httptest.NewServer(s)
	t.Cleanup(func() { hs.Close(); _ = s.Close(); _ = st.Close() })
	return s, st, hs
}

// TestWatchPrefix: a watch of jobs/ sees the grants and releases of its
// keys through the server at once (with the list far off: nothing else
// can signal them), and nothing of billing/.
func TestWatchPrefix(t *testing.T) {
	s, _, hs := prefixServer(t, time.Hour)
	next := openStream(t, hs, "/v1/watch?prefix=jobs/")
	if ev := next(); ev != `event: ready|data: {"prefix":"jobs/"}` {
		t.Fatalf("first event %q, want ready", ev)
	}
	acquire(t, s, "billing/x", owner)
	g := acquire(t, s, "jobs/a", owner)
	if ev := next(); ev != `event: change|data: {"key":"jobs/a"}` {
		t.Fatalf("after the grant of jobs/a: %q", ev)
	}
	release(t, s, g)
	acquire(t, s, "billing/y", owner)
	acquire(t, s, "jobs/b", owner)
	for _, want := range []string{"jobs/a", "jobs/b"} {
		if ev := next(); ev != `event: change|data: {"key":"`+want+`"}` {
			t.Fatalf("after the release of jobs/a and the grant of jobs/b: %q, want %s", ev, want)
		}
	}
}

// TestWatchPrefixSeesTheStore: a watch of jobs/ sees a grant made
// directly on the store, by its list. (A change through the server may be
// signalled twice, by the server and by the list after it; the test reads
// on to the change it waits for.)
func TestWatchPrefixSeesTheStore(t *testing.T) {
	_, st, hs := prefixServer(t, 20*time.Millisecond)
	next := openStream(t, hs, "/v1/watch?prefix=jobs/")
	next() // ready
	req := leasehold.AcquireRequest{Key: "jobs/direct", Owner: owner, TTL: time.Minute}
	if _, err := st.Acquire(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	if ev := next(); ev != `event: change|data: {"key":"jobs/direct"}` {
		t.Fatalf("after a grant made on the store itself: %q", ev)
	}
}

// TestWatchPrefixSharesPoller: two streams of one prefix share one list
// of it, which stops when both end.
func TestWatchPrefixSharesPoller(t *testing.T) {
	s, _, hs := prefixServer(t, 20*time.Millisecond)
	polls := func() int {
		s.polls.mu.Lock()
		defer s.polls.mu.Unlock()
		return len(s.polls.m)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var bodies []io.Closer
	for range 2 {
		req, _ := http.NewRequestWithContext(ctx, "GET", hs.URL+"/v1/watch?prefix=jobs/", nil)
		resp, err := hs.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		bufio.NewReader(resp.Body).ReadString('\n') // the ready event: subscribed
		bodies = append(bodies, resp.Body)
	}
	if n := polls(); n != 1 {
		t.Errorf("two streams of jobs/ list it %d times, want once", n)
	}
	cancel()
	for _, b := range bodies {
		b.Close()
	}
	for polls() != 0 {
		time.Sleep(time.Millisecond) // the handlers notice the clients left
	}
}

// noList is a store without a Lister.
type noList struct{ leasehold.Store }

// TestWatchPrefixRefusals: a watch by prefix with key or mode, with an
// invalid prefix, outside the token's scope, or on a store that cannot
// list, is refused naming the problem.
func TestWatchPrefixRefusals(t *testing.T) {
	s, _ := newServer(t)
	tests := []struct {
		target string
		status int
		code   string
		says   string
	}{
		{"/v1/watch?prefix=jobs/&key=jobs/a", 400, wire.CodeBadRequest, "not both"},
		{"/v1/watch?prefix=jobs/&mode=watch", 400, wire.CodeBadRequest, "not both"},
		{"/v1/watch?prefix=a%01", 400, wire.CodeInvalidKey, "control byte"},
		{"/v1/watch?prefix=a&prefix=b", 400, wire.CodeBadRequest, "2 times"},
	}
	for _, tc := range tests {
		w := do(t, s, "GET", tc.target, "")
		if e := errorOf(t, w); w.Code != tc.status || e.Code != tc.code || !strings.Contains(e.Message, tc.says) {
			t.Errorf("%s: %d %+v, want %d %s saying %q", tc.target, w.Code, e, tc.status, tc.code, tc.says)
		}
	}
	st := memory.New(nil)
	defer st.Close()
	nl := New(noList{st}, nil)
	defer nl.Close()
	w := do(t, nl, "GET", "/v1/watch?prefix=jobs/", "")
	if e := errorOf(t, w); w.Code != http.StatusNotImplemented || !strings.Contains(e.Message, "cannot list") {
		t.Errorf("a watch by prefix on a store without a Lister: %d %+v, want 501", w.Code, e)
	}
	as, _ := authServer(t)
	for _, target := range []string{"/v1/watch?prefix=billing/", "/v1/watch?prefix=", "/v1/watch?prefix=job"} {
		w := doAs(t, as, jobsToken, "GET", target, "")
		if e := errorOf(t, w); w.Code != http.StatusForbidden || e.Code != wire.CodeForbidden {
			t.Errorf("%s as jobs: %d %+v, want 403", target, w.Code, e)
		}
	}
	if w := doAs(t, as, jobsToken, "GET", "/v1/watch?prefix=jobs/x", ""); w.Code != http.StatusOK {
		t.Errorf("a watch of jobs/x as jobs: %d %s, want 200", w.Code, w.Body)
	}
}

// TestKeySinkBounded: a sink keeps each key once, at most max of them;
// past max it forgets them and reports the overflow once.
func TestKeySinkBounded(t *testing.T) {
	b := newBroker()
	k, stop := b.subscribePrefix("jobs/", 2)
	defer stop()
	for _, key := range []string{"jobs/a", "jobs/a", "billing/b", "jobs/b"} {
		b.signal(key)
	}
	if keys, over := k.take(); strings.Join(keys, ",") != "jobs/a,jobs/b" || over {
		t.Errorf("took %v overflow %v, want jobs/a,jobs/b without overflow", keys, over)
	}
	for _, key := range []string{"jobs/a", "jobs/b", "jobs/c", "jobs/d"} {
		b.touched(key)
	}
	if keys, over := k.take(); len(keys) != 0 || !over {
		t.Errorf("took %v overflow %v after 4 keys into 2, want none and overflow", keys, over)
	}
	if keys, over := k.take(); len(keys) != 0 || over {
		t.Errorf("took %v overflow %v again, want nothing", keys, over)
	}
}
