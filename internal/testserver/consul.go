package testserver

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"
)

// ConsulOptions configure a Consul agent or cluster. The zero value is one
// dev agent (a server that keeps its state in memory).
type ConsulOptions struct {
	// Servers is the number of server agents; 0 means one dev agent. A
	// cluster of N servers needs a majority of them running to serve.
	Servers int
	// Dir holds the agents' data and logs; "" means a new folder under the
	// system's temporary folder (NewConsul: the test's), removed by Stop.
	Dir string
	// Args are more arguments for every agent; Env is added to their
	// environment.
	Args []string
	Env  []string
	// Hosts are the agents' addresses, one per agent: each binds, advertises
	// and serves its HTTP API on its own (its serf and server RPC ports too,
	// which the others join and the leader is named by); nil means
	// 127.0.0.1 for all.
	Hosts []string
	// Prefix, if set, returns the argv prefix that starts agent i (its
	// Spec.Prefix): e.g. `ip netns exec NAME`, to run the agent in a
	// network namespace of its own, on its address of Hosts.
	Prefix func(i int) []string
}

// host returns agent i's address.
func (o ConsulOptions) host(i int) string {
	if i < len(o.Hosts) {
		return o.Hosts[i]
	}
	return "127.0.0.1"
}

// prefix returns agent i's argv prefix.
func (o ConsulOptions) prefix(i int) []string {
	if o.Prefix == nil {
		return nil
	}
	return o.Prefix(i)
}

// ConsulAgent is one agent of a cluster.
type ConsulAgent struct {
	*Process
	Name       string
	Host       string // its address (127.0.0.1 unless ConsulOptions.Hosts)
	HTTPPort   int    // its HTTP API on Host
	SerfPort   int    // its LAN gossip port, which the others join
	ServerPort int    // its server RPC port, by which the leader is named
	Dir        string // its data folder
}

// Addr returns the agent's HTTP API address, host:port.
func (a *ConsulAgent) Addr() string { return net.JoinHostPort(a.Host, strconv.Itoa(a.HTTPPort)) }

// serverAddr returns the agent's server RPC address, as a leader is named.
func (a *ConsulAgent) serverAddr() string {
	return net.JoinHostPort(a.Host, strconv.Itoa(a.ServerPort))
}

// Consul is a running dev agent or cluster of server agents.
type Consul struct {
	Agents []*ConsulAgent

	mu    sync.Mutex
	rmDir string // removed by Stop
}

// StartConsul starts the agents and waits until every one knows the
// cluster's leader. It retries with new ports if another process took one
// meanwhile.
func StartConsul(ctx context.Context, opts ConsulOptions) (*Consul, error) {
	bin, err := FindBin("consul", "consul.sh")
	if err != nil {
		return nil, err
	}
	if opts.Hosts != nil && len(opts.Hosts) != max(opts.Servers, 1) {
		return nil, fmt.Errorf("testserver: %d consul hosts for %d agents", len(opts.Hosts), max(opts.Servers, 1))
	}
	var c *Consul
	rm, err := startAttempts(opts.Dir, "leasehold-consul-", func(dir string) (err error) {
		c, err = startConsul(ctx, dir, bin, opts)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("testserver: cannot start Consul (%d servers): %w", max(opts.Servers, 1), err)
	}
	c.rmDir = rm
	return c, nil
}

// NewConsul starts agents for t (failing t if it cannot), with their data
// in t's temporary folder, and stops them when t ends.
func NewConsul(t testing.TB, opts ConsulOptions) *Consul {
	t.Helper()
	if opts.Dir == "" {
		opts.Dir = t.TempDir()
	}
	c, err := StartConsul(t.Context(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Stop)
	return c
}

func startConsul(ctx context.Context, dir, bin string, opts ConsulOptions) (*Consul, error) {
	n := max(opts.Servers, 1)
	const perAgent = 4 // http, serf LAN, serf WAN, server RPC
	ports, err := FreePorts(perAgent * n)
	if err != nil {
		return nil, err
	}
	c := &Consul{}
	for i := range n {
		a := &ConsulAgent{Name: fmt.Sprintf("c%d", i+1), Host: opts.host(i), HTTPPort: ports[perAgent*i], SerfPort: ports[perAgent*i+1],
			ServerPort: ports[perAgent*i+3], Dir: filepath.Join(dir, fmt.Sprintf("c%d", i+1))}
		if err := os.MkdirAll(a.Dir, 0o755); err != nil {
			return nil, err
		}
		args := []string{"agent", "-node", a.Name, "-bind", a.Host, "-advertise", a.Host, "-client", a.Host,
			"-http-port", fmt.Sprint(a.HTTPPort), "-dns-port", "-1", "-grpc-port", "-1", "-grpc-tls-port", "-1",
			"-serf-lan-port", fmt.Sprint(a.SerfPort), "-serf-wan-port", fmt.Sprint(ports[perAgent*i+2]),
			"-server-port", fmt.Sprint(a.ServerPort), "-log-level", "warn", "-disable-host-node-id"}
		if opts.Servers == 0 {
			args = append(args, "-dev")
		} else {
			args = append(args, "-server", "-bootstrap-expect", fmt.Sprint(n), "-data-dir", a.Dir,
				"-hcl", "performance { raft_multiplier = 1 }")
			for j := range n {
				if j != i {
					args = append(args, "-retry-join", net.JoinHostPort(opts.host(j), strconv.Itoa(ports[perAgent*j+1])))
				}
			}
		}
		a.Process = NewProcess(Spec{
			Name: fmt.Sprintf("consul %s on %s", a.Name, a.Addr()), Path: bin, Prefix: opts.prefix(i),
			Args: append(args, opts.Args...), Env: opts.Env,
			Log:   filepath.Join(a.Dir, "consul.log"),
			Probe: func(ctx context.Context) error { return consulHasLeader(ctx, a.Addr()) },
			// Consul leaves the cluster gracefully on SIGINT.
			StopSignal: syscall.SIGINT, StopGrace: time.Second,
			StartTimeout: 60 * time.Second,
		})
		c.Agents = append(c.Agents, a)
	}
	for _, a := range c.Agents {
		if err := a.Launch(); err != nil {
			c.Stop()
			return nil, err
		}
	}
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	if err := c.WaitServing(ctx); err != nil {
		logs := c.Logs()
		c.Stop()
		return nil, fmt.Errorf("%w\n%s", err, logs)
	}
	return c, nil
}

// consulLeader asks the agent at addr for the cluster's leader (its server
// RPC address); "" when there is none.
func consulLeader(ctx context.Context, addr string) (string, error) {
	body, err := httpDo(ctx, httpClient(), http.MethodGet, "http://"+addr+"/v1/status/leader", nil)
	if err != nil {
		return "", err
	}
	var leader string
	if err := json.Unmarshal(body, &leader); err != nil {
		return "", fmt.Errorf("testserver: consul /v1/status/leader said %q: %w", body, err)
	}
	return leader, nil
}

func consulHasLeader(ctx context.Context, addr string) error {
	l, err := consulLeader(ctx, addr)
	if err == nil && l == "" {
		err = fmt.Errorf("testserver: consul at %s knows no leader yet", addr)
	}
	return err
}

// WaitServing waits until every running agent knows a leader (after a
// start, or after the leader's loss, an election must finish).
func (c *Consul) WaitServing(ctx context.Context) error {
	for _, a := range c.Agents {
		if a.Running() {
			if err := a.WaitReady(ctx); err != nil {
				return err
			}
		}
	}
	return nil
}

// Leader returns the index of the running agent that leads the cluster,
// asking the running agents (after the leader's loss, they may name it
// until an election ends: such an answer is skipped).
func (c *Consul) Leader(ctx context.Context) (int, error) {
	for _, a := range c.Agents {
		if !a.Running() {
			continue
		}
		l, err := consulLeader(ctx, a.Addr())
		if err != nil || l == "" {
			continue
		}
		if i := c.agentAt(l); i >= 0 && c.Agents[i].Running() {
			return i, nil
		}
	}
	return -1, fmt.Errorf("testserver: no Consul agent knows a leader")
}

// agentAt returns the index of the agent whose server RPC address is addr,
// or -1.
func (c *Consul) agentAt(addr string) int {
	for i, a := range c.Agents {
		if addr == a.serverAddr() {
			return i
		}
	}
	return -1
}

// LeaderSeen returns the index of the agent that agent i follows as the
// cluster's leader (i itself when it leads), as its own Raft knows it
// (Consul answers /v1/status/leader locally, without forwarding), or -1
// when it has none; an error when i does not answer, or names a leader
// that is no agent of c.
func (c *Consul) LeaderSeen(ctx context.Context, i int) (int, error) {
	l, err := consulLeader(ctx, c.Agents[i].Addr())
	if err != nil || l == "" {
		return -1, err
	}
	if j := c.agentAt(l); j >= 0 {
		return j, nil
	}
	return -1, fmt.Errorf("testserver: consul %s follows %s, no agent of the cluster", c.Agents[i].Name, l)
}

// Restart starts agent i again on its data folder and ports, without
// waiting for it: see WaitServing.
func (c *Consul) Restart(i int) error { return c.Agents[i].Launch() }

// Kill sends SIGKILL to agent i and waits for it to exit.
func (c *Consul) Kill(i int) { c.Agents[i].Process.Kill() }

// Stop stops every agent (SIGINT, then SIGKILL after a second) and
// removes the cluster's folder if StartConsul made it.
func (c *Consul) Stop() {
	var wg sync.WaitGroup
	for _, a := range c.Agents {
		wg.Go(func() { a.Halt(syscall.SIGINT, time.Second) })
	}
	wg.Wait()
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.rmDir != "" {
		_ = os.RemoveAll(c.rmDir)
		c.rmDir = ""
	}
}

// URL returns the consul:// URL of agent i, for the consul store's OpenURL.
func (c *Consul) URL(i int) string { return "consul://" + c.Agents[i].Addr() }

// Logs returns the tail of every agent's log, for failure messages.
func (c *Consul) Logs() string {
	ps := make([]*Process, len(c.Agents))
	for i, a := range c.Agents {
		ps[i] = a.Process
	}
	return logsOf(ps)
}
