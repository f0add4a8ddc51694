package kube

import (
	"context"
	"net"
	"sync"
)

// conns dials the store's connections and closes them all at Close: the
// HTTP/2 connection client-go keeps to the server (and its reading
// goroutine) must not outlive the store. A rest.Config with its own Dial
// also keeps client-go from sharing a cached transport between stores.
type conns struct {
	d      net.Dialer
	mu     sync.Mutex
	open   map[*conn]struct{}
	closed bool
}

type conn struct {
	net.Conn
	cs   *conns
	once sync.Once
}

func newConns() *conns { return &conns{open: map[*conn]struct{}{}} }

// DialContext dials and tracks the connection; after closeAll it refuses.
func (cs *conns) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	nc, err := cs.d.DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	c := &conn{Conn: nc, cs: cs}
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if cs.closed {
		_ = nc.Close()
		return nil, net.ErrClosed
	}
	cs.open[c] = struct{}{}
	return c, nil
}

func (c *conn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() {
		c.cs.mu.Lock()
		delete(c.cs.open, c)
		c.cs.mu.Unlock()
	})
	return err
}

// closeAll closes every open connection and refuses new ones.
func (cs *conns) closeAll() {
	cs.mu.Lock()
	cs.closed = true
	open := cs.open
	cs.open = map[*conn]struct{}{}
	cs.mu.Unlock()
	for c := range open {
		_ = c.Conn.Close()
	}
}
