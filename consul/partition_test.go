package consul_test

import (
	"errors"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/internal/testserver"
)

// proxy forwards loopback TCP connections to an agent until cut: then it
// closes every connection and refuses new ones, until healed.
type proxy struct {
	l      net.Listener
	target string
	mu     sync.Mutex
	cutOff bool
	conns  map[net.Conn]struct{}
	wg     sync.WaitGroup
}

func newProxy(t *testing.T, target string) *proxy {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{l: l, target: target, conns: map[net.Conn]struct{}{}}
	p.wg.Add(1)
	go p.serve()
	t.Cleanup(func() { _ = l.Close(); p.cut(); p.wg.Wait() })
	return p
}

func (p *proxy) addr() string { return p.l.Addr().String() }

func (p *proxy) serve() {
	defer p.wg.Done()
	for {
		c, err := p.l.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		if p.cutOff {
			p.mu.Unlock()
			_ = c.Close()
			continue
		}
		up, err := net.Dial("tcp", p.target)
		if err != nil {
			p.mu.Unlock()
			_ = c.Close()
			continue
		}
		p.conns[c], p.conns[up] = struct{}{}, struct{}{}
		p.mu.Unlock()
		p.wg.Add(2)
		go p.pipe(c, up)
		go p.pipe(up, c)
	}
}

func (p *proxy) pipe(dst, src net.Conn) {
	defer p.wg.Done()
	_, _ = io.Copy(dst, src)
	_ = dst.Close()
	_ = src.Close()
}

// cut closes every connection and refuses new ones until heal.
func (p *proxy) cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cutOff = true
	for c := range p.conns {
		_ = c.Close()
	}
	p.conns = map[net.Conn]struct{}{}
}

func (p *proxy) heal() {
	p.mu.Lock()
	p.cutOff = false
	p.mu.Unlock()
}

// testPartition cuts a holder's store off its agent for longer than its
// session's TTL. The holder's lease ends by its own deadline, the store
// presumes the session lost (Grant.Lost closes) once it cannot have lived,
// Consul invalidates it and another store gets the key with a greater
// token. Healed, the cut-off store's renew and release of its old grant
// are refused naming the store, the key and the lost session, change
// nothing, and its next grant is on a new session with a greater token.
func testPartition(t *testing.T, c *testserver.Consul) {
	p := newProxy(t, c.Agents[0].Addr())
	st := openURL(t, "consul://"+p.addr())
	defer st.Close()
	lc, err := leasehold.New(st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer lc.Close()
	k := uniqueKey(t, "k")
	l, err := lc.Acquire(tctx(t), k, leasehold.AcquireOptions{TTL: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	g := l.Grant()
	cli := consulClient(t, c, 0)
	sid := entry(t, cli, st, k).Session
	p.cut()
	cutAt := time.Now()
	select {
	case <-l.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("lease still live 5 s after its store was cut off (TTL 1 s)")
	}
	if !errors.Is(l.Err(), leasehold.ErrExpired) {
		t.Errorf("lease ended with %v, want ErrExpired (its deadline)", l.Err())
	}
	select {
	case <-g.Lost:
		t.Logf("Grant.Lost closed %s after the cut (session TTL 10 s)", time.Since(cutAt).Round(time.Millisecond))
	case <-time.After(20 * time.Second):
		t.Fatal("Grant.Lost still open 20 s after the cut (session TTL 10 s)")
	}
	other := newStore(t, c, 0)
	g2 := acquireEventually(t, other, areq(k, 30*time.Second), 60*time.Second)
	t.Logf("another store got the key %s after the cut", time.Since(cutAt).Round(time.Millisecond))
	if g2.Token <= g.Token {
		t.Fatalf("token after the partition %d, not above %d", g2.Token, g.Token)
	}
	p.heal()
	_, err = st.Renew(tctx(t), g)
	if !errors.Is(err, leasehold.ErrNotHeld) || !strings.Contains(err.Error(), "consul") || !strings.Contains(err.Error(), k) || !strings.Contains(err.Error(), "session") {
		t.Errorf("renew after the partition: %v, want ErrNotHeld naming the store, the key and the session", err)
	}
	t.Logf("renew: %v", err)
	if err := st.Release(tctx(t), g); !errors.Is(err, leasehold.ErrNotHeld) {
		t.Errorf("release after the partition: %v, want ErrNotHeld", err)
	}
	if h, err := other.Holder(tctx(t), k); err != nil || h.Token != g2.Token {
		t.Errorf("after the old holder's renew and release: Holder %+v, %v; want token %d", h, err, g2.Token)
	}
	if se, _, err := cli.Session().Info(sid, nil); err != nil || se != nil {
		t.Errorf("the cut-off store's session after the partition: %+v, %v; want it gone", se, err)
	}
	if err := other.Release(tctx(t), g2); err != nil {
		t.Fatal(err)
	}
	g3, err := st.Acquire(tctx(t), areq(k, time.Second))
	if err != nil || g3.Token <= g2.Token {
		t.Fatalf("acquire after the heal: token %d, %v; want above %d", g3.Token, err, g2.Token)
	}
	_ = st.Release(tctx(t), g3)
}
