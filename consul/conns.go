package consul

import (
	"context"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/hashicorp/consul/api"
	"github.com/leasehold-go/leasehold"
)

// conns is the dialer of the HTTP transport OpenURL makes: it keeps every
// connection it made, so that Close can end them all, including one that a
// request still in flight when the store closed would have returned to the
// transport's idle pool afterwards (where its goroutines would live on).
type conns struct {
	d      net.Dialer
	mu     sync.Mutex
	open   map[*conn]struct{}
	closed bool
}

// newTransport returns an HTTP transport for a Consul client, as the
// client's default (pooled), dialing through c.
func newTransport(c *conns) *http.Transport {
	tr := api.DefaultConfig().Transport
	c.d = net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}
	c.open = map[*conn]struct{}{}
	tr.DialContext = c.dial
	return tr
}

func (c *conns) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	nc, err := c.d.DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		_ = nc.Close()
		return nil, leasehold.ErrClosed
	}
	tc := &conn{Conn: nc, c: c}
	c.open[tc] = struct{}{}
	return tc, nil
}

// closeAll closes every connection and refuses new ones.
func (c *conns) closeAll() {
	c.mu.Lock()
	c.closed = true
	all := c.open
	c.open = map[*conn]struct{}{}
	c.mu.Unlock()
	for tc := range all {
		_ = tc.Conn.Close()
	}
}

// conn is a connection that conns keeps until it is closed.
type conn struct {
	net.Conn
	c    *conns
	once sync.Once
}

func (tc *conn) Close() error {
	tc.once.Do(func() {
		tc.c.mu.Lock()
		delete(tc.c.open, tc)
		tc.c.mu.Unlock()
	})
	return tc.Conn.Close()
}
