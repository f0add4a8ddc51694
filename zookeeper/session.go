package zookeeper

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/internal/sessionpool"
)

// A session is one ZooKeeper session shared by every grant and waiter of
// one TTL class on one Store: one connection (zk.Conn), pinged by the
// client library, whatever the number of leases. Grants are ephemeral nodes
// of the session. The session asks for a timeout of twice its class (see
// doc.go for why twice), and its own housekeeping (sweep.go) deletes a
// grant not renewed within its TTL, as if a per-node TTL had ended it.
//
// go-zookeeper's Conn opens a new session by itself after the old one
// expires; a grant's node would then silently belong to a session the store
// knows nothing of. So the session's dialer refuses to connect again once
// the session is lost or abandoned: one Conn is one session.
type session struct {
	// Core is the session's bookkeeping: references, up and lost state,
	// grants (by token) with their deadlines and orphans; see grants.go.
	// Its Mu also guards sock. Code holding the sessions pool's mutex may
	// take Mu; code holding Mu never takes the pool's.
	sessionpool.Core[uint64, grantRec, orphan]

	st    *Store
	class time.Duration // the TTL granted to leases of this class
	want  time.Duration // the session timeout asked for: 2 x class

	conn   *zk.Conn
	refuse atomic.Bool  // the dialer refuses new connections
	sid    atomic.Int64 // the session id, once established
	nego   atomic.Int64 // the negotiated timeout in ms, from the last connect answer
	passwd atomic.Value // []byte: the session's password, from the connect answer

	ready     chan struct{} // closed when the session is established
	readyOnce sync.Once
	lastErr   atomic.Pointer[error] // how the last connection attempt went, for messages

	sock net.Conn // the current connection, under Mu
}

// newSession returns a session of class, not yet started, with one
// reference (its creator's).
func newSession(s *Store, class time.Duration) *session {
	ss := &session{st: s, class: class, want: 2 * class, ready: make(chan struct{})}
	ss.Init(sessionpool.Config[uint64, grantRec, orphan]{
		Class:        class,
		Idle:         s.idle,
		Forget:       func() { s.sessions.Forget(class, ss) },
		Orphan:       func(_ uint64, g grantRec) orphan { return orphan{path: g.path} },
		PokeOnOrphan: true,
		PokeOnTrack:  true,
	})
	return ss
}

// start connects and waits until the session is established, within the
// store's DialTimeout or ctx. On failure it abandons the connection.
func (ss *session) start(ctx context.Context) error {
	s := ss.st
	conn, _, err := zk.Connect(s.servers, ss.want,
		zk.WithDialer(ss.dial), zk.WithEventCallback(ss.event),
		zk.WithLogger(logger{s.logger}), zk.WithLogInfo(false))
	if err != nil {
		return &leasehold.StoreError{Store: Name, Op: "connect", Err: err}
	}
	ss.conn = conn
	t := time.NewTimer(s.dial)
	defer t.Stop()
	select {
	case <-ss.ready:
	case <-ctx.Done():
		ss.abandon()
		return fmt.Errorf("leasehold: %s store: no session with %s before the deadline (last: %v): %w", Name, s.hosts(), ss.dialErr(), ctx.Err())
	case <-t.C:
		ss.abandon()
		return &leasehold.StoreError{Store: Name, Op: "connect",
			Err: fmt.Errorf("no session with %s within %s (unreachable, or no quorum; last: %v): %w", s.hosts(), s.dial, ss.dialErr(), zk.ErrNoServer)}
	}
	if got := time.Duration(ss.nego.Load()) * time.Millisecond; got < ss.want {
		ss.abandon()
		return &leasehold.StoreError{Store: Name, Op: "connect", Err: fmt.Errorf(
			"asked for a session timeout of %s for TTL %s, the ensemble granted %s (its maxSessionTimeout changed since the store was opened?): %w",
			ss.want, ss.class, got, ErrSessionTimeout)}
	}
	if len(s.auth) > 0 {
		if err := ss.call(ctx, func() error { return conn.AddAuth("digest", s.auth) }); err != nil {
			ss.abandon()
			return s.storeErr(ctx, "connect", s.base, err)
		}
	}
	return nil
}

func (ss *session) dialErr() error {
	if err := ss.lastErr.Load(); err != nil {
		return *err
	}
	return errors.New("no connection attempt finished")
}

// dial is the Conn's dialer: it refuses once the session is lost or
// abandoned, and reads the session id and timeout from the server's
// answer to the connect request.
func (ss *session) dial(network, addr string, timeout time.Duration) (net.Conn, error) {
	if ss.refuse.Load() {
		return nil, errRefused
	}
	c, err := net.DialTimeout(network, addr, timeout)
	if err != nil {
		ss.lastErr.Store(&err)
		return nil, err
	}
	// Until an answer comes, what is known is that the server took the
	// connection and has not answered the session request: a server that
	// has no quorum, or whose leader commits nothing.
	noAnswer := fmt.Errorf("connected to %s, which did not answer the session request", addr)
	ss.lastErr.Store(&noAnswer)
	ss.Mu.Lock()
	defer ss.Mu.Unlock()
	if ss.refuse.Load() {
		_ = c.Close()
		return nil, errRefused
	}
	ss.sock = &sniffer{Conn: c, ss: ss}
	return ss.sock, nil
}

var errRefused = errors.New("session abandoned: no new connection")

// sniffer is a connection that reads the session id and negotiated timeout
// from the server's connect answer (go-zookeeper does not tell them).
type sniffer struct {
	net.Conn
	ss   *session
	head []byte
	done bool
}

func (c *sniffer) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if !c.done && n > 0 {
		c.head = append(c.head, p[:n]...)
		// length, protocolVersion, timeOut, sessionId, passwd (16 bytes)
		if len(c.head) >= 40 || len(c.head) >= 20 && binary.BigEndian.Uint64(c.head[12:]) == 0 {
			c.ss.nego.Store(int64(int32(binary.BigEndian.Uint32(c.head[8:]))))
			if len(c.head) >= 40 {
				c.ss.passwd.Store(append([]byte(nil), c.head[24:40]...))
			}
			c.ss.connected(int64(binary.BigEndian.Uint64(c.head[12:])))
			c.done, c.head = true, nil
		}
	}
	return n, err
}

// connected records the session id a connect answer named: the session's
// own on its first connection; another one (0: expired) means the
// session is gone.
func (ss *session) connected(id int64) {
	if id != 0 && ss.sid.CompareAndSwap(0, id) {
		return
	}
	if id != ss.sid.Load() {
		ss.refuse.Store(true)
		ss.markLost()
	}
}

// event is the Conn's event callback (it must not block).
func (ss *session) event(ev zk.Event) {
	if ev.Type != zk.EventSession {
		return
	}
	switch ev.State {
	case zk.StateHasSession:
		if ss.sid.Load() != 0 {
			ss.readyOnce.Do(func() { close(ss.ready) })
		}
	case zk.StateExpired:
		ss.refuse.Store(true)
		ss.markLost()
	}
}

// markLost records that the session is gone: every grant on it is lost,
// Done closes, the Conn is closed and the next acquire of the class starts
// a new session.
func (ss *session) markLost() {
	ss.refuse.Store(true)
	if ss.MarkLost(nil, nil) {
		// Called from the Conn's own goroutine: close it from another.
		ss.st.sessions.Go(func() {
			if ss.conn != nil {
				ss.conn.Close()
			}
		})
	}
}

// abandon drops the connection without closing the session, and closes
// the Conn: the ensemble expires the session a timeout later, and its
// nodes with it. It is how a session holding grants ends (Store.Close), and
// how a session that never got established is given up.
func (ss *session) abandon() {
	ss.refuse.Store(true)
	ss.Mu.Lock()
	sock := ss.sock
	ss.Mu.Unlock()
	if sock != nil {
		_ = sock.Close()
	}
	ss.Halt()
	if ss.conn != nil {
		ss.conn.Close()
	}
}

// closeSession closes the session: the ensemble deletes its nodes at once.
func (ss *session) closeSession() {
	ss.Halt()
	ss.conn.Close()
	ss.refuse.Store(true)
}

// shut ends the session for Store.Close (which has already removed it from
// the Store's sessions): closed if it holds no grants, else abandoned.
func (ss *session) shut() {
	switch started, holding := ss.Shut(); {
	case started && holding:
		ss.abandon()
	case started:
		ss.closeSession()
	}
}

// call runs fn, a blocking call on the Conn, and returns its error, or
// ctx's error if ctx ends first (fn then finishes on its own).
func (ss *session) call(ctx context.Context, fn func() error) error {
	return ss.callOr(ctx, fn, nil)
}

// callOr is call with a clean-up: if ctx ends before fn returns, abandoned
// is called with fn's error once fn returns (a create whose caller left
// deletes what it created).
func (ss *session) callOr(ctx context.Context, fn func() error, abandoned func(error)) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	var (
		mu        sync.Mutex
		result    error
		delivered bool
		left      bool
		done      = make(chan struct{})
	)
	ss.st.sessions.Go(func() {
		err := fn()
		mu.Lock()
		if left {
			mu.Unlock()
			if abandoned != nil {
				abandoned(err)
			}
			return
		}
		result, delivered = err, true
		mu.Unlock()
		close(done)
	})
	select {
	case <-done:
		return result
	case <-ctx.Done():
		mu.Lock()
		defer mu.Unlock()
		if delivered {
			return result
		}
		left = true
		return ctx.Err()
	}
}
