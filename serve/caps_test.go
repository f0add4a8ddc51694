package serve

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/leasehold-go/leasehold/internal/wire"
	"github.com/leasehold-go/leasehold/memory"
)

// capServer serves a new memory store with opts over a loopback port.
func capServer(t *testing.T, opts *Options) (*Server, *httptest.Server) {
	t.Helper()
	st := memory.New(nil)
	s := New(st, opts)
	hs := httptest.NewServer(s)
	t.Cleanup(func() { hs.Close(); _ = s.Close(); _ = st.Close() })
	return s, hs
}

// overCapacity checks that w is the 503 over_capacity refusal naming the
// option and the flag.
func overCapacity(t *testing.T, w *httptest.ResponseRecorder, option, flag string) {
	t.Helper()
	e := errorOf(t, w)
	if w.Code != http.StatusServiceUnavailable || e.Code != wire.CodeOverCapacity || !strings.Contains(e.Message, option) ||
		!strings.Contains(e.Message, flag) || w.Header().Get("Retry-After") == "" {
		t.Errorf("%d %+v (Retry-After %q), want 503 over_capacity naming %s and %s", w.Code, e, w.Header().Get("Retry-After"), option, flag)
	}
}

// waitUntil polls cond until it holds; the test's own timeout bounds it.
func waitUntil(cond func() bool) {
	for !cond() {
		time.Sleep(time.Millisecond)
	}
}

// TestMaxWatches: past Options.MaxWatches streams (by key and by prefix),
// one more is refused with 503 over_capacity; once one ends, one more is
// let in.
func TestMaxWatches(t *testing.T) {
	s, hs := capServer(t, &Options{MaxWatches: 2})
	_ = openStream(t, hs, "/v1/watch?key=jobs/a")
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "GET", hs.URL+"/v1/watch?prefix=jobs/", nil)
	resp, err := hs.Client().Do(req)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("the second stream: %v %v", resp, err)
	}
	for _, target := range []string{"/v1/watch?key=jobs/b", "/v1/watch?prefix=billing/"} {
		overCapacity(t, do(t, s, "GET", target, ""), "MaxWatches", "--max-watches")
	}
	cancel()
	resp.Body.Close()
	waitUntil(func() bool { return s.watches.load() == 1 })
	_ = openStream(t, hs, "/v1/watch?prefix=billing/")
}

// TestMaxWaits: past Options.MaxWaits acquires waiting, an acquire that
// would wait is refused with 503 over_capacity, one that would not wait
// still gets 409 held, and the waiting one is granted on the release.
func TestMaxWaits(t *testing.T) {
	s, hs := capServer(t, &Options{MaxWaits: 1})
	g := acquire(t, s, "jobs/w", owner)
	waiter := jsonOf(t, wire.AcquireRequest{Key: "jobs/w", Owner: owner + "2", TTLMs: 60000, WaitMs: 30000})
	got := make(chan int, 1)
	go func() {
		resp, err := hs.Client().Post(hs.URL+"/v1/acquire", "application/json", strings.NewReader(waiter))
		if err != nil {
			got <- 0
			return
		}
		resp.Body.Close()
		got <- resp.StatusCode
	}()
	waitUntil(func() bool { return s.waits.load() == 1 })
	overCapacity(t, do(t, s, "POST", "/v1/acquire", waiter), "MaxWaits", "--max-waits")
	noWait := jsonOf(t, wire.AcquireRequest{Key: "jobs/w", Owner: owner + "3", TTLMs: 60000})
	if w := do(t, s, "POST", "/v1/acquire", noWait); w.Code != http.StatusConflict {
		t.Errorf("an acquire without wait: %d %s, want 409 held", w.Code, w.Body)
	}
	release(t, s, g)
	if code := <-got; code != http.StatusOK {
		t.Errorf("the waiting acquire answered %d, want 200 after the release", code)
	}
	if n := s.waits.load(); n != 0 {
		t.Errorf("%d acquires still counted as waiting", n)
	}
}

// smallBuffers is a listener whose connections have small kernel send
// buffers, so that a client that does not read fills them soon.
type smallBuffers struct{ net.Listener }

func (l smallBuffers) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetWriteBuffer(4 << 10)
	}
	return c, err
}

// TestSlowWatcherDropped: a client that opens a watch by prefix and never
// reads is dropped once its connection's buffers are full and a write has
// waited StreamWriteTimeout, while keys keep changing; what the server
// keeps for it meanwhile is bounded (MaxPendingKeys).
func TestSlowWatcherDropped(t *testing.T) {
	st := memory.New(nil)
	s := New(st, &Options{StreamWriteTimeout: 50 * time.Millisecond})
	hs := httptest.NewUnstartedServer(s)
	hs.Listener = smallBuffers{hs.Listener}
	hs.Start()
	t.Cleanup(func() { hs.Close(); _ = s.Close(); _ = st.Close() })
	c, err := net.Dial("tcp", hs.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.(*net.TCPConn).SetReadBuffer(4 << 10)
	fmt.Fprintf(c, "GET /v1/watch?prefix=jobs/ HTTP/1.1\r\nHost: x\r\n\r\n")
	head, err := bufio.NewReader(io.LimitReader(c, 12)).ReadString(' ')
	if err != nil || head != "HTTP/1.1 " {
		t.Fatalf("the watch's answer begins %q (%v)", head, err)
	}
	// From here on the client reads nothing.
	long := "jobs/" + strings.Repeat("k", 1000)
	for i := 0; s.watches.load() != 0; i++ {
		g := acquire(t, s, fmt.Sprintf("%s%d", long, i), owner)
		release(t, s, g)
		if i%1000 == 999 {
			time.Sleep(10 * time.Millisecond) // give the blocked write its deadline
		}
	}
}
