package zookeeper

import (
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"testing"
	"time"

	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/internal/testserver"
)

func open(t *testing.T, z *testserver.ZooKeeper, chroot string) *Store {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s, err := OpenURL(ctx, z.URL(chroot))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func ictx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func ireq(key string, ttl time.Duration) leasehold.AcquireRequest {
	return leasehold.AcquireRequest{Key: key, Owner: leasehold.NewOwnerID(), Label: "test", TTL: ttl}
}

// TestSessions checks that the grants of one TTL class share one session,
// and that a session's expiry ends every grant on it at once.
func TestSessions(t *testing.T) {
	z := testserver.NewZooKeeper(t, testserver.ZooKeeperOptions{MaxSession: time.Minute})
	t.Run("one_session_per_ttl_class", func(t *testing.T) { testShared(t, z) })
	t.Run("expiry_closes_every_lost_channel", func(t *testing.T) { testExpiry(t, z) })
}

func testShared(t *testing.T, z *testserver.ZooKeeper) {
	s := open(t, z, "/shared")
	var sess *session
	for i := range 20 {
		g, err := s.Acquire(ictx(t), ireq("k"+string(rune('a'+i)), time.Second))
		if err != nil {
			t.Fatal(err)
		}
		r := g.Private.(*grantRef)
		if sess != nil && r.sess != sess {
			t.Fatalf("grant %d is on another session", i)
		}
		sess = r.sess
	}
	if _, err := s.Acquire(ictx(t), ireq("other", 2*time.Second)); err != nil {
		t.Fatal(err)
	}
	n := len(s.sessions.All())
	if n != 2 {
		t.Fatalf("%d sessions for two TTL classes, want 2", n)
	}
	if got := time.Duration(sess.nego.Load()) * time.Millisecond; got != 2*time.Second {
		t.Errorf("the 1 s class's session timeout is %s, want 2 s", got)
	}
}

func testExpiry(t *testing.T, z *testserver.ZooKeeper) {
	s := open(t, z, "/expiry")
	c, err := leasehold.New(s, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var leases []*leasehold.Lease
	for _, k := range []string{"a", "b", "c"} {
		l, err := c.Acquire(ictx(t), k, leasehold.AcquireOptions{TTL: 5 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		leases = append(leases, l)
	}
	ss := leases[0].Grant().Private.(*grantRef).sess
	expire(t, z.Nodes[0].Addr(), ss.sid.Load(), ss.passwd.Load().([]byte))
	for _, l := range leases {
		select {
		case <-l.Grant().Lost:
		case <-time.After(10 * time.Second):
			t.Fatalf("lease on %s: Lost not closed 10 s after its session expired", l.Key())
		}
		select {
		case <-l.Context().Done():
		case <-time.After(5 * time.Second):
			t.Fatalf("lease on %s: context not cancelled after its session expired", l.Key())
		}
		if err := context.Cause(l.Context()); !errors.Is(err, leasehold.ErrLost) {
			t.Errorf("lease on %s ended with %v, want ErrLost", l.Key(), err)
		}
	}
	// A new session serves the next acquire; the keys are free, with
	// greater tokens.
	for _, l := range leases {
		g, err := s.Acquire(ictx(t), ireq(l.Key(), 5*time.Second))
		if err != nil {
			t.Fatalf("acquire %s after the expiry: %v", l.Key(), err)
		}
		if g.Token <= l.Token() {
			t.Errorf("token %d after the expiry not greater than %d", g.Token, l.Token())
		}
		if g.Private.(*grantRef).sess == ss {
			t.Errorf("grant made on the expired session")
		}
	}
}

// expire ends session id on the server at addr, as an expiry would: it
// takes the session over with its password and closes it.
func expire(t *testing.T, addr string, id int64, passwd []byte) {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	req := make([]byte, 48)
	binary.BigEndian.PutUint32(req[0:], 44)
	binary.BigEndian.PutUint32(req[16:], 10000)
	binary.BigEndian.PutUint64(req[20:], uint64(id))
	binary.BigEndian.PutUint32(req[28:], 16)
	copy(req[32:], passwd)
	var cl [12]byte
	binary.BigEndian.PutUint32(cl[0:], 8)
	binary.BigEndian.PutUint32(cl[4:], 1)
	binary.BigEndian.PutUint32(cl[8:], uint32(0xfffffff5))
	if _, err := c.Write(req); err != nil {
		t.Fatal(err)
	}
	var hdr [4]byte
	if _, err := io.ReadFull(c, hdr[:]); err != nil {
		t.Fatal(err)
	}
	resp := make([]byte, binary.BigEndian.Uint32(hdr[:]))
	if _, err := io.ReadFull(c, resp); err != nil {
		t.Fatal(err)
	}
	if got := int64(binary.BigEndian.Uint64(resp[8:])); got != id {
		t.Fatalf("taking session %x over: the server answered session %x", id, got)
	}
	if _, err := c.Write(cl[:]); err != nil {
		t.Fatal(err)
	}
	_, _ = io.ReadFull(c, hdr[:])
}
