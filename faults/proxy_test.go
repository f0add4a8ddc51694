package faults_test

import (
	"bufio"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/leasehold-go/leasehold/faults"
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

func newProxy(t *testing.T, e *echoServer) *faults.Proxy {
	t.Helper()
	p, err := faults.NewProxy(e.ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

func dial(t *testing.T, p *faults.Proxy) (net.Conn, *bufio.Reader) {
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
