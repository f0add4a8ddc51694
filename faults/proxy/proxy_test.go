package proxy_test

import (
	"bufio"
	"io"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/leasehold-go/leasehold/faults/proxy"
)

// echoServer answers each line with the same line, and counts lines.
type echoServer struct {
	ln    net.Listener
	lines atomic.Int64
	wg    sync.WaitGroup
	mu    sync.Mutex
	conns []net.Conn
}

func newEcho(t *testing.T) *echoServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	e := &echoServer{ln: ln}
	e.wg.Add(1)
	go func() {
		defer e.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			e.mu.Lock()
			e.conns = append(e.conns, c)
			e.mu.Unlock()
			e.wg.Add(1)
			go func() {
				defer e.wg.Done()
				r := bufio.NewReader(c)
				for {
					l, err := r.ReadString('\n')
					if err != nil {
						return
					}
					e.lines.Add(1)
					if _, err := io.WriteString(c, l); err != nil {
						return
					}
				}
			}()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		e.mu.Lock()
		for _, c := range e.conns {
			c.Close()
		}
		e.mu.Unlock()
		e.wg.Wait()
	})
	return e
}

func newProxy(t *testing.T, e *echoServer) *proxy.Proxy {
	t.Helper()
	p, err := proxy.New(e.ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

func dial(t *testing.T, p *proxy.Proxy) (net.Conn, *bufio.Reader) {
	t.Helper()
	c, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c, bufio.NewReader(c)
}

func roundTrip(c net.Conn, r *bufio.Reader, msg string, timeout time.Duration) (string, error) {
	_ = c.SetDeadline(time.Now().Add(timeout))
	if _, err := io.WriteString(c, msg+"\n"); err != nil {
		return "", err
	}
	return r.ReadString('\n')
}

func TestProxyForwards(t *testing.T) {
	p := newProxy(t, newEcho(t))
	c, r := dial(t, p)
	for _, m := range []string{"a", "b"} {
		got, err := roundTrip(c, r, m, 5*time.Second)
		if err != nil || got != m+"\n" {
			t.Fatalf("echo %q: %q, %v", m, got, err)
		}
	}
}

func TestProxyLatencyDelaysReplies(t *testing.T) {
	p := newProxy(t, newEcho(t))
	c, r := dial(t, p)
	if _, err := roundTrip(c, r, "warm", 5*time.Second); err != nil {
		t.Fatal(err)
	}
	const d = 150 * time.Millisecond
	p.SetLatency(d)
	start := time.Now()
	if got, err := roundTrip(c, r, "slow", 5*time.Second); err != nil || got != "slow\n" {
		t.Fatalf("%q, %v", got, err)
	}
	if el := time.Since(start); el < d {
		t.Fatalf("reply after %s, before the added latency %s", el, d)
	}
}

func TestProxyDropsRepliesAfterTheRequestWentThrough(t *testing.T) {
	e := newEcho(t)
	p := newProxy(t, e)
	c, r := dial(t, p)
	if _, err := roundTrip(c, r, "warm", 5*time.Second); err != nil {
		t.Fatal(err)
	}
	p.SetDropReplies(true)
	if got, err := roundTrip(c, r, "lost", 5*time.Second); err == nil {
		t.Fatalf("got a reply %q while replies are dropped", got)
	}
	if n := e.lines.Load(); n != 2 {
		t.Fatalf("server saw %d lines, want 2: the request must go through", n)
	}
	p.SetDropReplies(false)
	c2, r2 := dial(t, p)
	if got, err := roundTrip(c2, r2, "back", 5*time.Second); err != nil || got != "back\n" {
		t.Fatalf("after the fault: %q, %v", got, err)
	}
}

func TestProxyPartitionThenHeal(t *testing.T) {
	e := newEcho(t)
	p := newProxy(t, e)
	c, r := dial(t, p)
	if _, err := roundTrip(c, r, "warm", 5*time.Second); err != nil {
		t.Fatal(err)
	}
	p.Partition()
	if got, err := roundTrip(c, r, "cut", 200*time.Millisecond); err == nil {
		t.Fatalf("got %q through a partition", got)
	}
	if n := e.lines.Load(); n != 1 {
		t.Fatalf("server saw %d lines during the partition, want 1", n)
	}
	p.Heal()
	// The stalled connection is reset by the heal; a new one works.
	if got, err := roundTrip(c, r, "old", 2*time.Second); err == nil && got == "old\n" {
		t.Fatal("the connection that lived through the partition still works; want it reset")
	}
	c2, r2 := dial(t, p)
	if got, err := roundTrip(c2, r2, "new", 5*time.Second); err != nil || got != "new\n" {
		t.Fatalf("after heal: %q, %v", got, err)
	}
}

func TestProxyResetAll(t *testing.T) {
	p := newProxy(t, newEcho(t))
	c, r := dial(t, p)
	if _, err := roundTrip(c, r, "warm", 5*time.Second); err != nil {
		t.Fatal(err)
	}
	p.ResetAll()
	if _, err := roundTrip(c, r, "gone", 2*time.Second); err == nil {
		t.Fatal("the connection survived a reset")
	}
	c2, r2 := dial(t, p)
	if got, err := roundTrip(c2, r2, "new", 5*time.Second); err != nil || got != "new\n" {
		t.Fatalf("after reset: %q, %v", got, err)
	}
}

func TestProxyLoseReplyThenHoldRequests(t *testing.T) {
	e := newEcho(t)
	p := newProxy(t, e)
	c1, r1 := dial(t, p)
	c2, r2 := dial(t, p)
	c3, r3 := dial(t, p)
	for _, c := range []struct {
		c net.Conn
		r *bufio.Reader
	}{{c1, r1}, {c2, r2}, {c3, r3}} {
		if _, err := roundTrip(c.c, c.r, "warm", 5*time.Second); err != nil {
			t.Fatal(err)
		}
	}
	granted := func(b []byte) bool { return strings.Contains(string(b), "granted") }
	runs := func(b []byte) bool { return strings.HasPrefix(string(b), "run") }
	p.LoseReplyDelayRequests(granted, runs, time.Minute, time.Minute)

	// A reply that is not the chosen one goes through.
	if got, err := roundTrip(c1, r1, "held by another", 5*time.Second); err != nil || got != "held by another\n" {
		t.Fatalf("a reply the fault does not choose: %q, %v", got, err)
	}
	if got, err := roundTrip(c1, r1, "granted", 5*time.Second); err == nil {
		t.Fatalf("got the chosen reply %q; want it dropped", got)
	}
	if n := e.lines.Load(); n != 5 {
		t.Fatalf("server saw %d lines, want 5: the dropped reply's request must go through", n)
	}
	// After the drop, a statement is held back; other requests pass.
	if got, err := roundTrip(c3, r3, "prepare", 5*time.Second); err != nil || got != "prepare\n" {
		t.Fatalf("a request that runs nothing: %q, %v", got, err)
	}
	if _, err := io.WriteString(c2, "run clean-up\n"); err != nil {
		t.Fatal(err)
	}
	waitHeld(t, p) // the proxy reads it
	if st := p.LateStats(); st.Dropped == 0 || st.Held != 1 || st.Delivered != 0 || string(st.Request) != "granted\n" {
		t.Fatalf("stats before the release: %+v, want dropped (its request \"granted\"), 1 held, none delivered", st)
	}
	if n := e.lines.Load(); n != 6 {
		t.Fatalf("server saw %d lines before the release, want 6: the held statement must not reach it", n)
	}
	p.ReleaseDelayed()
	_ = c2.SetDeadline(time.Now().Add(5 * time.Second))
	if got, err := r2.ReadString('\n'); err != nil || got != "run clean-up\n" {
		t.Fatalf("the held statement after the release: %q, %v", got, err)
	}
	// The proxy records the delivery after writing the chunk upstream, so
	// the echo's reply can reach the test first: wait for the record.
	for i := 0; p.LateStats().Delivered == 0 && i < 500; i++ {
		time.Sleep(10 * time.Millisecond)
	}
	if st := p.LateStats(); st.Delivered < st.Dropped {
		t.Fatalf("stats after the release: %+v, want delivered after dropped", st)
	}
}

// HoldRequests holds back the chosen requests of every connection, old and
// new, from the call until ReleaseDelayed; Clear ends it.
func TestProxyHoldRequests(t *testing.T) {
	e := newEcho(t)
	p := newProxy(t, e)
	c1, r1 := dial(t, p)
	if _, err := roundTrip(c1, r1, "warm", 5*time.Second); err != nil {
		t.Fatal(err)
	}
	p.HoldRequests(func(b []byte) bool { return strings.Contains(string(b), "k4") }, time.Minute)
	if got, err := roundTrip(c1, r1, "acquire k3", 5*time.Second); err != nil || got != "acquire k3\n" {
		t.Fatalf("a request on another key: %q, %v", got, err)
	}
	c2, r2 := dial(t, p)
	if _, err := io.WriteString(c2, "acquire k4\n"); err != nil {
		t.Fatal(err)
	}
	waitHeld(t, p)
	if n := e.lines.Load(); n != 2 {
		t.Fatalf("server saw %d lines before the release, want 2: the held request must not reach it", n)
	}
	if st := p.LateStats(); st.Dropped != 0 || st.Held != 1 {
		t.Fatalf("stats: %+v, want nothing dropped, 1 held", st)
	}
	p.ReleaseDelayed()
	_ = c2.SetDeadline(time.Now().Add(5 * time.Second))
	if got, err := r2.ReadString('\n'); err != nil || got != "acquire k4\n" {
		t.Fatalf("the held request after the release: %q, %v", got, err)
	}
	p.Clear()
	if got, err := roundTrip(c1, r1, "acquire k4 again", 5*time.Second); err != nil || got != "acquire k4 again\n" {
		t.Fatalf("after Clear: %q, %v", got, err)
	}
	if st := p.LateStats(); st.Held != 1 {
		t.Fatalf("after Clear: %d held, want still 1", st.Held)
	}
}

// waitHeld waits until p holds a request back.
func waitHeld(t *testing.T, p *proxy.Proxy) {
	t.Helper()
	for i := 0; p.LateStats().Held == 0; i++ {
		if i == 500 {
			t.Fatal("the proxy never read the held request")
		}
		time.Sleep(10 * time.Millisecond)
	}
}
