package testserver

import (
	"context"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

func ctxT(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}

func TestRedisLifecycle(t *testing.T) {
	r := NewRedis(t, RedisOptions{})
	if v, err := r.Command(ctxT(t), "SET", "k", "v"); err != nil || v != "+OK" {
		t.Fatalf("SET = %q, %v", v, err)
	}
	if err := r.Pause(); err != nil {
		t.Fatal(err)
	}
	short, cancel := context.WithTimeout(ctxT(t), 200*time.Millisecond)
	err := redisPing(short, r.Addr())
	cancel()
	if err == nil {
		t.Fatal("a paused server answered PING")
	}
	if err := r.Resume(); err != nil {
		t.Fatal(err)
	}
	if v, err := r.Command(ctxT(t), "GET", "k"); err != nil || v != "v" {
		t.Fatalf("GET after resume = %q, %v", v, err)
	}
	port := r.Port
	if err := r.Restart(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	if v, err := r.Command(ctxT(t), "GET", "k"); err != nil || v != "(nil)" || r.Port != port {
		t.Fatalf("GET after restart on port %d (was %d) = %q, %v; want (nil): no persistence", r.Port, port, v, err)
	}
	r.Stop()
	if _, err := os.Stat(r.Dir); !os.IsNotExist(err) || r.Running() {
		t.Fatalf("after Stop: running %v, folder %v", r.Running(), err)
	}
}

func TestRedisMastersAndArgs(t *testing.T) {
	ms := NewRedisMasters(t, 3, RedisOptions{Args: []string{"--requirepass", "pw"}})
	seen := map[int]bool{}
	for _, m := range ms {
		if seen[m.Port] {
			t.Fatal("two masters on one port")
		}
		seen[m.Port] = true
		if v, _ := m.Command(ctxT(t), "GET", "k"); !strings.HasPrefix(v, "-NOAUTH") {
			t.Fatalf("GET without the password = %q, want NOAUTH (the extra argument applies)", v)
		}
	}
}

func TestPostgresAndBouncer(t *testing.T) {
	pg := NewPostgres(t, PostgresOptions{})
	if err := pgSession(ctxT(t), pg.Addr(), "postgres", "postgres", "CREATE TABLE t (x int)"); err != nil {
		t.Fatal(err)
	}
	if err := pgSession(ctxT(t), pg.Addr(), "lh_pw", "postgres"); err == nil || !strings.Contains(err.Error(), "password") {
		t.Fatalf("lh_pw without a password: %v, want a password request", err)
	}
	if err := pgSession(ctxT(t), pg.Addr(), "postgres", "postgres", "SELECT nosuch"); err == nil || !strings.Contains(err.Error(), "42703") {
		t.Fatalf("a bad query: %v, want SQLSTATE 42703", err)
	}
	if err := pg.Restart(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	if err := pgSession(ctxT(t), pg.Addr(), "postgres", "postgres", "SELECT x FROM t"); err != nil {
		t.Fatalf("the table after a crash and restart: %v", err)
	}
	b := NewBouncer(t, pg)
	if err := pgSession(ctxT(t), b.Addr(), "postgres", "postgres", "SELECT x FROM t"); err != nil {
		t.Fatalf("through PgBouncer: %v", err)
	}
	if !strings.Contains(b.ConnString("a=1"), "cache_describe&a=1") {
		t.Fatalf("ConnString = %s", b.ConnString("a=1"))
	}
}

func TestMariaDB(t *testing.T) {
	m := NewMariaDB(t, MariaDBOptions{Database: "leasehold_test"})
	if err := mysqlGreeting(ctxT(t), m.Addr()); err != nil {
		t.Fatal(err)
	}
	if got := m.DSN("clientFoundRows=true"); got != "root@tcp("+m.Addr()+")/leasehold_test?clientFoundRows=true" {
		t.Fatalf("DSN = %s", got)
	}
	m.Stop()
	if m.Running() {
		t.Fatal("running after Stop")
	}
}

func TestEtcdCluster(t *testing.T) {
	c := NewEtcd(t, EtcdOptions{Nodes: 3})
	if len(c.PIDs()) != 3 || !strings.HasPrefix(c.URL(), "etcd://127.0.0.1:") {
		t.Fatalf("PIDs %v, URL %s", c.PIDs(), c.URL())
	}
	leader, err := c.Leader(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	c.Kill(leader)
	if c.Running(leader) {
		t.Fatal("the killed leader runs")
	}
	if err := c.WaitHealthy(ctxT(t)); err != nil {
		t.Fatalf("two of three: %v", err)
	}
	next, err := c.Leader(ctxT(t))
	if err != nil || next == leader {
		t.Fatalf("new leader %d (old %d): %v", next, leader, err)
	}
	for i := range c.Nodes {
		if i == leader {
			continue
		}
		if seen, err := c.LeaderSeen(ctxT(t), i); err != nil || seen != next {
			t.Fatalf("member %d follows %d (%v), want the leader %d", i, seen, err, next)
		}
	}
	if err := c.Restart(leader); err != nil {
		t.Fatal(err)
	}
	if err := c.WaitHealthy(ctxT(t)); err != nil {
		t.Fatalf("after restart: %v\n%s", err, c.Logs())
	}
}

func TestEtcdSingleNode(t *testing.T) {
	c := NewEtcd(t, EtcdOptions{})
	if i, err := c.Leader(ctxT(t)); err != nil || i != 0 {
		t.Fatalf("Leader = %d, %v", i, err)
	}
}

// Per-member hosts and prefixes: each member listens on its own address
// and starts through its prefix.
func TestEtcdHostsPrefix(t *testing.T) {
	hosts := []string{"127.0.0.11", "127.0.0.12", "127.0.0.13"}
	c := NewEtcd(t, EtcdOptions{Nodes: 3, Hosts: hosts,
		Prefix: func(i int) []string { return []string{"/usr/bin/env", "LEASEHOLD_MEMBER=" + strconv.Itoa(i)} }})
	for i, n := range c.Nodes {
		if !strings.HasPrefix(n.ClientURL, "http://"+hosts[i]+":") || !strings.HasPrefix(n.PeerURL, "http://"+hosts[i]+":") {
			t.Fatalf("member %d: client %s, peer %s; want host %s", i, n.ClientURL, n.PeerURL, hosts[i])
		}
		env, err := os.ReadFile("/proc/" + strconv.Itoa(n.Pid()) + "/environ")
		if err != nil || !strings.Contains(string(env), "LEASEHOLD_MEMBER="+strconv.Itoa(i)+"\x00") {
			t.Fatalf("member %d did not start through its prefix: %v", i, err)
		}
	}
	if _, err := c.Leader(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	if _, err := StartEtcd(ctxT(t), EtcdOptions{Nodes: 3, Hosts: hosts[:2]}); err == nil {
		t.Fatal("StartEtcd with 2 hosts for 3 members did not fail")
	}
}
