// Package proxy is the fault harness's TCP proxy: one between each holder
// and each store endpoint, whose faults (latency, dropped replies, resets,
// partitions, a lost reply followed by delayed requests) hit that holder's
// link to the store alone. Package pgwire, below it, recognises
// PostgreSQL messages in the bytes it forwards.
package proxy

import (
	"errors"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// Proxy is a TCP proxy between one holder and one store endpoint. Its
// faults apply to every connection through it:
//
//   - SetLatency delays every reply chunk (store to holder) by d, keeping
//     the order: the late "you have the lock" (F4);
//   - SetDropReplies drops the first reply of each connection and resets
//     it, after the request reached the store: the reply lost after the
//     server applied the request (F5);
//   - Partition stalls every connection, old and new, in both directions,
//     and Heal resets them all and lets traffic through again: a full
//     partition ending the way TCP ends one that lasted too long (F6);
//   - ResetAll resets every open connection now (F7);
//   - LoseReplyDelayRequests drops one chosen reply (and resets its
//     connection), then holds back the requests sent in a short window
//     after it until ReleaseDelayed (or a time limit): an acquire whose
//     reply was lost, and the clean-up it sends, which reaches the store
//     late (F5c); HoldRequests holds back the chosen requests alone, with
//     no lost reply (F5c keeps the other holders off the key with it).
//     Both are in late.go.
type Proxy struct {
	upstream string
	ln       net.Listener

	mu      sync.Mutex
	latency time.Duration
	drop    bool
	late    lateFault
	gate    chan struct{} // closed while traffic flows; open (blocking) during a partition
	conns   map[*proxyConn]struct{}
	closed  bool
	wg      sync.WaitGroup
}

type proxyConn struct {
	client  net.Conn
	once    sync.Once
	isReset atomic.Bool

	mu      sync.Mutex
	server  net.Conn
	lastReq []byte // the last request chunk read from the holder
}

// noteRequest records b as pc's last request chunk.
func (c *proxyConn) noteRequest(b []byte) {
	c.mu.Lock()
	c.lastReq = b
	c.mu.Unlock()
}

// lastRequest is pc's last request chunk.
func (c *proxyConn) lastRequest() []byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lastReq
}

// setServer attaches the upstream side; false (and s closed) if pc was
// already reset.
func (c *proxyConn) setServer(s net.Conn) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.isReset.Load() {
		_ = s.Close()
		return false
	}
	c.server = s
	return true
}

// reset closes both sides; the holder's side with SO_LINGER 0, so it sees
// a reset rather than an orderly close.
func (c *proxyConn) reset() {
	c.once.Do(func() {
		c.isReset.Store(true)
		if tc, ok := c.client.(*net.TCPConn); ok {
			_ = tc.SetLinger(0)
		}
		_ = c.client.Close()
		c.mu.Lock()
		if c.server != nil {
			_ = c.server.Close()
		}
		c.mu.Unlock()
	})
}

// New listens on a free loopback port and forwards to upstream.
func New(upstream string) (*Proxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	open := make(chan struct{})
	close(open)
	p := &Proxy{upstream: upstream, ln: ln, gate: open, conns: make(map[*proxyConn]struct{})}
	p.wg.Add(1)
	go p.accept()
	return p, nil
}

// Addr returns the proxy's host:port.
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// SetLatency sets the delay added to every reply chunk (0: none).
func (p *Proxy) SetLatency(d time.Duration) {
	p.mu.Lock()
	p.latency = d
	p.mu.Unlock()
}

// SetDropReplies turns the dropping of replies on or off.
func (p *Proxy) SetDropReplies(on bool) {
	p.mu.Lock()
	p.drop = on
	p.mu.Unlock()
}

// Partition stalls all traffic until Heal.
func (p *Proxy) Partition() {
	p.mu.Lock()
	defer p.mu.Unlock()
	select {
	case <-p.gate:
		p.gate = make(chan struct{})
	default: // already partitioned
	}
}

// Heal ends a partition: the stalled connections are reset and new ones
// flow again.
func (p *Proxy) Heal() {
	p.mu.Lock()
	g := p.gate
	p.mu.Unlock()
	select {
	case <-g:
		return
	default:
	}
	p.ResetAll()
	p.mu.Lock()
	close(g)
	p.mu.Unlock()
}

// ResetAll resets every open connection.
func (p *Proxy) ResetAll() {
	p.mu.Lock()
	cs := make([]*proxyConn, 0, len(p.conns))
	for c := range p.conns {
		cs = append(cs, c)
	}
	p.mu.Unlock()
	for _, c := range cs {
		c.reset()
	}
}

// Clear ends every fault.
func (p *Proxy) Clear() {
	p.SetLatency(0)
	p.SetDropReplies(false)
	p.mu.Lock()
	p.late.match, p.late.start = nil, 0
	p.mu.Unlock()
	p.ReleaseDelayed()
	p.Heal()
}

// Close stops the proxy and resets its connections.
func (p *Proxy) Close() error {
	p.mu.Lock()
	p.closed = true
	select {
	case <-p.gate:
	default:
		close(p.gate)
	}
	p.mu.Unlock()
	err := p.ln.Close()
	p.ResetAll()
	p.wg.Wait()
	return err
}

func (p *Proxy) state() (gate chan struct{}, latency time.Duration, drop bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.gate, p.latency, p.drop
}

func (p *Proxy) accept() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		pc := &proxyConn{client: c}
		p.mu.Lock()
		if p.closed {
			p.mu.Unlock()
			pc.reset()
			return
		}
		p.conns[pc] = struct{}{}
		p.mu.Unlock()
		p.wg.Add(1)
		go p.serve(pc)
	}
}

func (p *Proxy) serve(pc *proxyConn) {
	defer p.wg.Done()
	defer func() {
		pc.reset()
		p.mu.Lock()
		delete(p.conns, pc)
		p.mu.Unlock()
	}()
	// A connection opened during a partition waits for it to heal (and
	// is then reset with the others, as its handshake never got through).
	gate, _, _ := p.state()
	<-gate
	if p.isReset(pc) {
		return
	}
	s, err := net.DialTimeout("tcp", p.upstream, 2*time.Second)
	if err != nil {
		return
	}
	if !pc.setServer(s) {
		return
	}
	var wg sync.WaitGroup
	wg.Go(func() { p.pump(pc, pc.client, s, false) })
	wg.Go(func() { p.pump(pc, s, pc.client, true) })
	wg.Wait()
}

// isReset reports whether pc was reset.
func (p *Proxy) isReset(pc *proxyConn) bool { return pc.isReset.Load() }

type chunk struct {
	b    []byte
	due  time.Time
	late <-chan struct{} // held by the late clean-up fault until closed (or due)
}

// pump copies src to dst; reply is true for the store-to-holder direction.
func (p *Proxy) pump(pc *proxyConn, src, dst net.Conn, reply bool) {
	defer pc.reset()
	q := make(chan chunk, 256)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for c := range q {
			if d := time.Until(c.due); d > 0 {
				t := time.NewTimer(d)
				select {
				case <-t.C:
				case <-c.late: // nil (never ready) unless held by the late fault
				}
				t.Stop()
			}
			gate, _, _ := p.state()
			<-gate
			if _, err := dst.Write(c.b); err != nil {
				pc.reset()
				for range q {
				}
				return
			}
			if c.late != nil {
				p.lateDelivered()
			}
		}
	}()
	defer func() { close(q); <-done }()
	buf := make([]byte, 32*1024)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			gate, latency, drop := p.state()
			<-gate
			if reply && (drop || p.lateReply(pc, buf[:n])) {
				return // the request went through; its reply is lost
			}
			b := make([]byte, n)
			copy(b, buf[:n])
			c := chunk{b: b, due: time.Now().Add(latency)}
			if !reply {
				pc.noteRequest(b)
				if d, release := p.lateDelay(b); d > 0 {
					c.due, c.late = time.Now().Add(d), release
				}
			}
			q <- c
		}
		if err != nil {
			if !errors.Is(err, io.EOF) {
				pc.reset()
			}
			return
		}
	}
}
