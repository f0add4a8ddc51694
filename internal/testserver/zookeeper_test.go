package testserver

import (
	"context"
	"os"
	"strconv"
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
	for i := range z.Nodes {
		if i == old {
			continue
		}
		if seen, err := z.LeaderSeen(ctxT(t), i); err != nil || seen != now {
			t.Fatalf("server %d follows %d (%v), want the leader %d", i, seen, err, now)
		}
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

// Per-server hosts and prefixes: each server listens on its own address
// and starts through its prefix, and every server follows the one leader.
func TestZooKeeperHostsPrefix(t *testing.T) {
	hosts := []string{"127.0.0.21", "127.0.0.22", "127.0.0.23"}
	z := NewZooKeeper(t, ZooKeeperOptions{Nodes: 3, Hosts: hosts,
		Prefix: func(i int) []string { return []string{"/usr/bin/env", "LEASEHOLD_MEMBER=" + strconv.Itoa(i)} }})
	for i, n := range z.Nodes {
		if !strings.HasPrefix(n.Addr(), hosts[i]+":") {
			t.Fatalf("server %d listens on %s; want host %s", i, n.Addr(), hosts[i])
		}
		env, err := os.ReadFile("/proc/" + strconv.Itoa(n.Pid()) + "/environ")
		if err != nil || !strings.Contains(string(env), "LEASEHOLD_MEMBER="+strconv.Itoa(i)+"\x00") {
			t.Fatalf("server %d did not start through its prefix: %v", i, err)
		}
		cfg, err := os.ReadFile(n.Dir + "/zoo.cfg")
		if err != nil || !strings.Contains(string(cfg), "clientPortAddress="+hosts[i]+"\n") ||
			!strings.Contains(string(cfg), "server.3="+hosts[2]+":") {
			t.Fatalf("server %d's zoo.cfg does not name the hosts (%v):\n%s", i, err, cfg)
		}
	}
	l, err := z.Leader(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	for i := range z.Nodes {
		if seen, err := z.LeaderSeen(ctxT(t), i); err != nil || seen != l {
			t.Fatalf("server %d follows %d (%v), want the leader %d", i, seen, err, l)
		}
	}
	if _, err := StartZooKeeper(ctxT(t), ZooKeeperOptions{Nodes: 3, Hosts: hosts[:2]}); err == nil {
		t.Fatal("StartZooKeeper with 2 hosts for 3 servers did not fail")
	}
}

func TestSrvrMode(t *testing.T) {
	for _, c := range []struct {
		name, out, want string
		ok              bool
	}{
		{"follower", "Zookeeper version: 3.8.0\nZxid: 0x0\nMode: follower\nNode count: 5\n", "follower", true},
		{"leader", "Zxid: 0x100000000\r\nMode: leader\r\n", "leader", true},
		{"not serving", "This ZooKeeper instance is not currently serving requests\n", "", false},
		{"empty mode", "Mode: \n", "", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got, ok := srvrMode(c.out); got != c.want || ok != c.ok {
				t.Fatalf("srvrMode = %q, %v; want %q, %v", got, ok, c.want, c.ok)
			}
		})
	}
}

func shortCtx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	t.Cleanup(cancel)
	return ctx
}
