package remote

import (
	"context"
	"crypto/tls"
	"net"
	"net/http"
	"sync"
	"time"
)

// maxIdleConns bounds the idle connections a store's own client keeps to
// its server.
const maxIdleConns = 256

// conns is the transport of a store's own client: it remembers the
// connections it dials, so that Close closes every one of them (an idle
// connection that a finished request puts back after CloseIdleConnections
// would otherwise outlive the store).
type conns struct {
	mu     sync.Mutex
	open   map[net.Conn]struct{}
	closed bool
}

// transport returns a transport cloned from http.DefaultTransport, with
// tlsConfig (if not nil), whose connections c tracks.
func (c *conns) transport(tlsConfig *tls.Config) *http.Transport {
	c.open = make(map[net.Conn]struct{})
	t := http.DefaultTransport.(*http.Transport).Clone()
	// Keep as many idle connections to it as
	// goroutines use at once (http.DefaultTransport keeps 2 per host: with
	// 64 goroutines, each burst of requests dialled up to 62 new
	// connections and left as many in TIME_WAIT).
	t.MaxIdleConns, t.MaxIdleConnsPerHost = maxIdleConns, maxIdleConns
	if tlsConfig != nil {
		t.TLSClientConfig = tlsConfig.Clone()
	}
	d := &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}
	t.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		conn, err := d.DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		c.mu.Lock()
		defer c.mu.Unlock()
		if c.closed {
			conn.Close()
			return nil, net.ErrClosed
		}
		tc := &trackedConn{Conn: conn, owner: c}
		c.open[tc] = struct{}{}
		return tc, nil
	}
	return t
}

// closeAll closes every connection and refuses new ones.
func (c *conns) closeAll() {
	c.mu.Lock()
	c.closed = true
	open := c.open
	c.open = nil
	c.mu.Unlock()
	for conn := range open {
		conn.Close()
	}
}

type trackedConn struct {
	net.Conn
	owner *conns
	once  sync.Once
}

func (t *trackedConn) Close() error {
	t.once.Do(func() {
		t.owner.mu.Lock()
		delete(t.owner.open, t)
		t.owner.mu.Unlock()
	})
	return t.Conn.Close()
}
