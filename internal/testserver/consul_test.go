package testserver

import (
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestConsulDevAgent(t *testing.T) {
	c, err := StartConsul(ctxT(t), ConsulOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Stop()
	url := "http://" + c.Agents[0].Addr() + "/v1/kv/leasehold-test"
	if b, err := httpDo(ctxT(t), httpClient(), http.MethodPut, url, []byte("v")); err != nil || strings.TrimSpace(string(b)) != "true" {
		t.Fatalf("PUT kv = %q, %v", b, err)
	}
	if b, err := httpDo(ctxT(t), httpClient(), http.MethodGet, url+"?raw", nil); err != nil || string(b) != "v" {
		t.Fatalf("GET kv = %q, %v", b, err)
	}
	if i, err := c.Leader(ctxT(t)); err != nil || i != 0 {
		t.Fatalf("Leader = %d, %v", i, err)
	}
	if got := c.URL(0); got != "consul://"+c.Agents[0].Addr() {
		t.Fatalf("URL = %q", got)
	}
	dir := c.rmDir
	c.Stop()
	if _, err := os.Stat(dir); !os.IsNotExist(err) || c.Agents[0].Running() {
		t.Fatalf("after Stop: running %v, folder %v", c.Agents[0].Running(), err)
	}
}

func TestConsulClusterLeaderKill(t *testing.T) {
	c := NewConsul(t, ConsulOptions{Servers: 3})
	old, err := c.Leader(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	c.Kill(old)
	ctx := ctxT(t)
	now := -1
	for now < 0 && ctx.Err() == nil { // until the others elect a leader
		now, _ = c.Leader(ctx)
		time.Sleep(50 * time.Millisecond)
	}
	if now < 0 || now == old {
		t.Fatalf("leader after killing %d: %d", old, now)
	}
	if err := c.Restart(old); err != nil {
		t.Fatal(err)
	}
	if err := c.WaitServing(ctxT(t)); err != nil {
		t.Fatal(err)
	}
}

// Per-agent hosts and prefixes: each agent binds and serves on its own
// address, starts through its prefix, and the agents name one another's
// server addresses as the leader they follow.
func TestConsulHostsPrefix(t *testing.T) {
	hosts := []string{"127.0.0.21", "127.0.0.22", "127.0.0.23"}
	c := NewConsul(t, ConsulOptions{Servers: 3, Hosts: hosts,
		Prefix: func(i int) []string { return []string{"/usr/bin/env", "LEASEHOLD_MEMBER=" + strconv.Itoa(i)} }})
	for i, a := range c.Agents {
		if !strings.HasPrefix(a.Addr(), hosts[i]+":") {
			t.Fatalf("agent %d serves on %s, want host %s", i, a.Addr(), hosts[i])
		}
		env, err := os.ReadFile("/proc/" + strconv.Itoa(a.Pid()) + "/environ")
		if err != nil || !strings.Contains(string(env), "LEASEHOLD_MEMBER="+strconv.Itoa(i)+"\x00") {
			t.Fatalf("agent %d did not start through its prefix: %v", i, err)
		}
	}
	l, err := c.Leader(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	for i := range c.Agents {
		if seen, err := c.LeaderSeen(ctxT(t), i); err != nil || seen != l {
			t.Fatalf("agent %d follows %d (%v), want the leader %d", i, seen, err, l)
		}
	}
	if _, err := StartConsul(ctxT(t), ConsulOptions{Servers: 3, Hosts: hosts[:2]}); err == nil {
		t.Fatal("StartConsul with 2 hosts for 3 agents did not fail")
	}
}
