package testserver

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"
)

func TestZooKeeperStandalone(t *testing.T) {
	z, err := StartZooKeeper(ctxT(t), ZooKeeperOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer z.Stop()
	if m, err := z.Mode(ctxT(t), 0); err != nil || m != "standalone" {
		t.Fatalf("Mode = %q, %v; want standalone", m, err)
	}
	if got := z.URL("/locks"); got != "zk://"+z.Nodes[0].Addr()+"/locks" {
		t.Fatalf("URL = %q", got)
	}
	if err := z.Nodes[0].Pause(); err != nil {
		t.Fatal(err)
	}
	if err := zooKeeperServes(shortCtx(t), z.Nodes[0].Addr()); err == nil {
		t.Fatal("a paused server answered srvr")
	}
	if err := z.Nodes[0].Resume(); err != nil {
		t.Fatal(err)
	}
	dir := z.rmDir
	z.Stop()
	if _, err := os.Stat(dir); !os.IsNotExist(err) || z.Nodes[0].Running() {
		t.Fatalf("after Stop: running %v, folder %v", z.Nodes[0].Running(), err)
	}
}

func TestZooKeeperEnsembleLeaderKill(t *testing.T) {
	z := NewZooKeeper(t, ZooKeeperOptions{Nodes: 3})
	if n := strings.Count(z.Servers(), ","); n != 2 {
		t.Fatalf("Servers = %q, want three", z.Servers())
	}
	modes := map[string]int{}
	for i := range z.Nodes {
		m, err := z.Mode(ctxT(t), i)
		if err != nil {
			t.Fatal(err)
		}
		modes[m]++
	}
	if modes["leader"] != 1 || modes["follower"] != 2 {
		t.Fatalf("modes %v, want one leader and two followers", modes)
	}
	old, err := z.Leader(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	z.Kill(old)
	if err := z.WaitServing(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	now, err := z.Leader(ctxT(t))
	if err != nil || now == old {
		t.Fatalf("leader after killing %d: %d, %v", old, now, err)
	}
	if err := z.Restart(old); err != nil {
		t.Fatal(err)
	}
	if err := z.WaitServing(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	if m, err := z.Mode(ctxT(t), old); err != nil || m != "follower" {
		t.Fatalf("the restarted server: Mode %q, %v; want follower", m, err)
	}
}

func shortCtx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	t.Cleanup(cancel)
	return ctx
}
