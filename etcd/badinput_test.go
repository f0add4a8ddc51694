package etcd_test

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/etcd"
	"github.com/leasehold-go/leasehold/internal/testserver"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/goleak"
	"go.uber.org/zap"
)

// closedPort returns a loopback port nothing listens on.
func closedPort(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	_ = l.Close()
	return addr
}

func TestUnreachableCluster(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	addr := closedPort(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_, err := etcd.OpenURL(ctx, "etcd://"+addr+"?dial_timeout=1s")
	if err == nil {
		t.Fatal("OpenURL of a dead address succeeded")
	}
	if !errors.Is(err, leasehold.ErrStore) || !strings.Contains(err.Error(), addr) || !strings.Contains(err.Error(), "unreachable") {
		t.Errorf("OpenURL: %v, want an ErrStore naming the address as unreachable", err)
	}
	t.Logf("OpenURL: %v", err)

	// A store on a client of a dead cluster: the acquire fails, nothing held,
	// no keepalive left running after Close.
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{"http://" + addr}, DialTimeout: time.Second, Logger: zap.NewNop()})
	if err != nil {
		t.Fatal(err)
	}
	st := etcd.New(cli, nil)
	actx, acancel := context.WithTimeout(context.Background(), time.Second)
	defer acancel()
	_, err = st.Acquire(actx, areq("k", time.Second))
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "unreachable") {
		t.Errorf("acquire on a dead cluster: %v, want the caller's deadline, saying the cluster is unreachable", err)
	}
	t.Logf("acquire: %v", err)
	if err := st.Close(); err != nil {
		t.Errorf("close: %v", err)
	}
	_ = cli.Close()

	for _, bad := range []string{"etcd://", "redis://x:1", "etcd://host-without-port", "etcd://h:1?bogus=1", "etcd://h:1?idle=soon"} {
		if _, err := etcd.OpenURL(context.Background(), bad); err == nil {
			t.Errorf("OpenURL(%q) accepted", bad)
		}
	}
}

// TestAuthAndLimits runs a node with authentication and a small request
// limit: wrong passwords, missing permissions and oversized requests are
// clear errors that leave nothing held.
func TestAuthAndLimits(t *testing.T) {
	c := testserver.NewEtcd(t, testserver.EtcdOptions{MaxRequestBytes: 16 << 10})
	root := etcdClient(t, c)
	ctx := tctx(t)
	for _, step := range []func() error{
		func() error { _, err := root.RoleAdd(ctx, "root"); return err },
		func() error { _, err := root.UserAdd(ctx, "root", "rootpw"); return err },
		func() error { _, err := root.UserGrantRole(ctx, "root", "root"); return err },
		func() error { _, err := root.UserAdd(ctx, "nobody", "nobodypw"); return err },
		func() error { _, err := root.AuthEnable(ctx); return err },
	} {
		if err := step(); err != nil {
			t.Fatalf("auth setup: %v", err)
		}
	}
	host := strings.TrimPrefix(c.Nodes[0].ClientURL, "http://")

	t.Run("wrong_password", func(t *testing.T) {
		_, err := etcd.OpenURL(tctx(t), "etcd://root:wrong@"+host)
		if !errors.Is(err, leasehold.ErrStore) || !strings.Contains(err.Error(), "authentication") {
			t.Fatalf("OpenURL with a wrong password: %v, want an authentication ErrStore", err)
		}
		if strings.Contains(err.Error(), "wrong") {
			t.Errorf("error shows the password: %v", err)
		}
		t.Logf("wrong password: %v", err)
	})

	t.Run("no_permission", func(t *testing.T) {
		defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
		cli, err := clientv3.New(clientv3.Config{Endpoints: c.Endpoints(), Username: "nobody", Password: "nobodypw", DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
		if err != nil {
			t.Fatal(err)
		}
		defer cli.Close()
		st := etcd.New(cli, nil)
		defer st.Close()
		_, err = st.Acquire(tctx(t), areq("k", time.Second))
		if !errors.Is(err, leasehold.ErrStore) || !strings.Contains(err.Error(), "permission") {
			t.Fatalf("acquire without permission: %v, want a permission ErrStore", err)
		}
		t.Logf("no permission: %v", err)
		_ = st.Close()
		_ = cli.Close()
	})

	t.Run("request_too_large", func(t *testing.T) {
		st := openURL(t, "etcd://root:rootpw@"+host)
		defer st.Close()
		r := areq("k", time.Second)
		r.Label = strings.Repeat("L", 32<<10)
		_, err := st.Acquire(tctx(t), r)
		if !errors.Is(err, leasehold.ErrStore) || !strings.Contains(err.Error(), "max-request-bytes") {
			t.Fatalf("oversized acquire: %v, want an ErrStore naming --max-request-bytes", err)
		}
		t.Logf("too large: %v", err)
		if _, err := st.Holder(tctx(t), "k"); !errors.Is(err, leasehold.ErrNotHeld) {
			t.Errorf("oversized acquire left the key held: %v", err)
		}
		// The store still works for a request of normal size.
		g, err := st.Acquire(tctx(t), areq("k", time.Second))
		if err != nil {
			t.Fatalf("acquire after the oversized one: %v", err)
		}
		_ = st.Release(tctx(t), g)
	})
}
