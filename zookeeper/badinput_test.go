package zookeeper_test

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/internal/testserver"
	"github.com/leasehold-go/leasehold/zookeeper"
)

// closedPort returns a loopback address nothing listens on.
func closedPort(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	_ = l.Close()
	return addr
}

func TestUnreachableEnsemble(t *testing.T) {
	addr := closedPort(t)
	_, err := zookeeper.OpenURL(context.Background(), "zk://"+addr+"?dial_timeout=1s")
	if !errors.Is(err, leasehold.ErrStore) || !strings.Contains(err.Error(), "zookeeper") || !strings.Contains(err.Error(), addr) {
		t.Fatalf("OpenURL of a dead address: %v, want an ErrStore naming the store and the address", err)
	}
	t.Logf("OpenURL: %v", err)
	for _, bad := range []string{"zk://", "redis://x:1", "zk://host-without-port", "zk://h:1?bogus=1",
		"zk://h:1?idle=soon", "zk://h:1/", "zk://h:1/zookeeper/x", "zk://user@h:1"} {
		if err := zookeeper.CheckURL(bad); err == nil && bad != "zk://h:1/" {
			t.Errorf("CheckURL(%q) accepted", bad)
		}
	}
	if err := zookeeper.CheckURL("zk://a:1,b:2/locks/x?idle=1s&dial_timeout=2s"); err != nil {
		t.Errorf("CheckURL of a good URL: %v", err)
	}
}

// TestSilentServer opens the store on a server that takes the connection
// and never answers the session request (what a ZooKeeper without a
// working leader does): the error must say so, not that the address was
// unreachable.
func TestSilentServer(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	defer func() { _ = l.Close(); <-done }()
	go func() {
		defer close(done)
		var held []net.Conn
		for {
			c, err := l.Accept()
			if err != nil {
				for _, c := range held {
					_ = c.Close()
				}
				return
			}
			held = append(held, c)
		}
	}()
	_, err = zookeeper.OpenURL(context.Background(), "zk://"+l.Addr().String()+"?dial_timeout=1s")
	if !errors.Is(err, leasehold.ErrStore) || !strings.Contains(err.Error(), "did not answer the session request") {
		t.Fatalf("OpenURL of a silent server: %v, want an ErrStore saying it did not answer", err)
	}
	t.Logf("OpenURL: %v", err)
}

// rawConn returns a go-zookeeper connection on z, with the digest auth
// "owner:pw", closed when t ends.
func rawConn(t *testing.T, z *testserver.ZooKeeper) *zk.Conn {
	t.Helper()
	c, _, err := zk.Connect(strings.Split(z.Servers(), ","), 10*time.Second, zk.WithLogInfo(false), zk.WithLogger(nopLogger{}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	if err := c.AddAuth("digest", []byte("owner:pw")); err != nil {
		t.Fatal(err)
	}
	return c
}

type nopLogger struct{}

func (nopLogger) Printf(string, ...any) {}

// TestRefusals checks the errors of an ACL that refuses the store, a node
// in the way that leasehold did not create, and TTLs outside the
// negotiated bounds: each names the store, the path and the cause, and
// leaves nothing behind.
func TestRefusals(t *testing.T) {
	z := testserver.NewZooKeeper(t, testserver.ZooKeeperOptions{MinSession: time.Second, MaxSession: 20 * time.Second})
	raw := rawConn(t, z)
	if _, err := raw.Create("/locked", nil, 0, zk.DigestACL(zk.PermAll, "owner", "pw")); err != nil {
		t.Fatal(err)
	}
	t.Run("acl_refuses", func(t *testing.T) {
		st := openURL(t, z.URL("/locked/app"))
		defer st.Close()
		_, err := st.Acquire(tctx(t), areq("k", 2*time.Second))
		if !errors.Is(err, leasehold.ErrStore) || !strings.Contains(err.Error(), "/locked/app") || !strings.Contains(err.Error(), "not authorized") {
			t.Fatalf("acquire under a refusing ACL: %v, want an ErrStore naming /locked/app and the ACL", err)
		}
		t.Logf("refused: %v", err)
		// With the owner's credentials in the URL the same base works.
		ok := openURL(t, strings.Replace(z.URL("/locked/app"), "zk://", "zk://owner:pw@", 1))
		defer ok.Close()
		g, err := ok.Acquire(tctx(t), areq("k", 2*time.Second))
		if err != nil {
			t.Fatalf("acquire with the owner's credentials: %v", err)
		}
		_ = ok.Release(tctx(t), g)
	})
	t.Run("foreign_node_in_the_way", func(t *testing.T) {
		st := openURL(t, z.URL("/foreign"))
		defer st.Close()
		g, err := st.Acquire(tctx(t), areq("mine", 2*time.Second)) // makes the base
		if err != nil {
			t.Fatal(err)
		}
		_ = st.Release(tctx(t), g)
		for name, make := range map[string]func(p string) error{
			"persistent node": func(p string) error {
				_, err := raw.Create(p, []byte("someone else's"), 0, zk.WorldACL(zk.PermAll))
				return err
			},
			"ephemeral node": func(p string) error {
				_, err := raw.Create(p, nil, zk.FlagEphemeral, zk.WorldACL(zk.PermAll))
				return err
			},
			"foreign child": func(p string) error {
				if _, err := raw.CreateContainer(p, []byte("leasehold key"), zk.FlagContainer, zk.WorldACL(zk.PermAll)); err != nil {
					return err
				}
				_, err := raw.Create(p+"/not-ours", nil, 0, zk.WorldACL(zk.PermAll))
				return err
			},
		} {
			key := strings.ReplaceAll(name, " ", "-")
			p := st.ParentOf(key)
			if err := make(p); err != nil {
				t.Fatal(err)
			}
			_, err := st.Acquire(tctx(t), areq(key, 2*time.Second))
			if !errors.Is(err, zookeeper.ErrForeignNode) || !errors.Is(err, leasehold.ErrStore) || !strings.Contains(err.Error(), p) {
				t.Errorf("%s: acquire: %v, want an ErrForeignNode naming %s", name, err, p)
			}
			t.Logf("%s: %v", name, err)
			kids, _, err := raw.Children(p)
			if err == nil && len(kids) > 1 || err == nil && len(kids) == 1 && kids[0] != "not-ours" {
				t.Errorf("%s: the refused acquire left nodes behind: %v", name, kids)
			}
		}
	})
	t.Run("planted_nodes", func(t *testing.T) { testPlanted(t, z, raw) })
	t.Run("ttl_outside_the_bounds", func(t *testing.T) {
		st := openURL(t, z.URL("/bounds"))
		defer st.Close()
		info := st.Info()
		if info.MinTTL != time.Second || info.MaxTTL != 10*time.Second {
			t.Fatalf("TTL bounds %s..%s, want 1s..10s from sessions of 1s..20s", info.MinTTL, info.MaxTTL)
		}
		if b := st.Bounds(); b.MinSession != time.Second || b.MaxSession != 20*time.Second {
			t.Errorf("Bounds = %+v", b)
		}
		for _, ttl := range []time.Duration{999 * time.Millisecond, 11 * time.Second} {
			_, err := st.Acquire(tctx(t), areq("k", ttl))
			if !errors.Is(err, leasehold.ErrInvalidTTL) || !strings.Contains(err.Error(), "zookeeper") {
				t.Errorf("TTL %s: %v, want an ErrInvalidTTL naming the store", ttl, err)
			}
		}
	})
}
