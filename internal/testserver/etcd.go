package testserver

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// EtcdOptions configure an etcd cluster. The zero value is a single node
// with fast elections.
type EtcdOptions struct {
	// Nodes is the number of members; 0 means 1.
	Nodes int
	// Heartbeat and Election are the raft timings; 0 means 25 ms and
	// 250 ms (etcd's defaults are 100 ms and 1 s). The minimum lease TTL
	// etcd grants is 1.5 elections, so 250 ms still allows 1 s leases.
	Heartbeat, Election time.Duration
	// NoFsync runs with --unsafe-no-fsync.
	NoFsync bool
	// MaxRequestBytes is --max-request-bytes; 0 means etcd's default
	// (1.5 MiB).
	MaxRequestBytes int
	// Dir holds the members' data and logs; "" means a new folder under
	// the system's temporary folder (NewEtcd: the test's), removed by Stop.
	Dir string
	// Args are more arguments for every member; Env is added to their
	// environment.
	Args []string
	Env  []string
	// Hosts are the members' addresses, one per member, for their client
	// and peer URLs; nil means 127.0.0.1 for all.
	Hosts []string
	// Prefix, if set, returns the argv prefix that starts member i (its
	// Spec.Prefix): e.g. `ip netns exec NAME`, to run the member in a
	// network namespace of its own, on its address of Hosts.
	Prefix func(i int) []string
}

// host returns member i's address.
func (o EtcdOptions) host(i int) string {
	if i < len(o.Hosts) {
		return o.Hosts[i]
	}
	return "127.0.0.1"
}

// prefix returns member i's argv prefix.
func (o EtcdOptions) prefix(i int) []string {
	if o.Prefix == nil {
		return nil
	}
	return o.Prefix(i)
}

// EtcdNode is one etcd member.
type EtcdNode struct {
	*Process
	Name      string
	ClientURL string // http://host:port (127.0.0.1 unless EtcdOptions.Hosts)
	PeerURL   string
	Dir       string // its data folder

	mu    sync.Mutex
	id    string // its member ID, once its status was read
	state string // --initial-cluster-state: "new" at first, then "existing"
	down  bool   // stopped on purpose (Kill, StopNode), not crashed
}

// Etcd is a running etcd cluster.
type Etcd struct {
	Nodes []*EtcdNode

	opts    EtcdOptions
	initial string // --initial-cluster
	token   string
	rmDir   string // removed by Stop
}

// StartEtcd starts a cluster and waits until every member is healthy (it
// has a leader and answers reads). It retries with new ports if another
// process took one meanwhile.
func StartEtcd(ctx context.Context, opts EtcdOptions) (*Etcd, error) {
	bin, err := FindBin("etcd", "etcd.sh")
	if err != nil {
		return nil, err
	}
	if opts.Nodes == 0 {
		opts.Nodes = 1
	}
	if opts.Heartbeat == 0 {
		opts.Heartbeat = 25 * time.Millisecond
	}
	if opts.Election == 0 {
		opts.Election = 250 * time.Millisecond
	}
	if opts.Hosts != nil && len(opts.Hosts) != opts.Nodes {
		return nil, fmt.Errorf("testserver: %d etcd hosts for %d members", len(opts.Hosts), opts.Nodes)
	}
	var c *Etcd
	rm, err := startAttempts(opts.Dir, "leasehold-etcd-", func(dir string) (err error) {
		c, err = startEtcd(ctx, dir, bin, opts)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("testserver: cannot start a %d-node etcd cluster: %w", opts.Nodes, err)
	}
	c.rmDir = rm
	return c, nil
}

// NewEtcd starts a cluster for t (failing t if it cannot), with its data
// in t's temporary folder, and stops it when t ends.
func NewEtcd(t testing.TB, opts EtcdOptions) *Etcd {
	t.Helper()
	if opts.Dir == "" {
		opts.Dir = t.TempDir()
	}
	c, err := StartEtcd(t.Context(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Stop)
	return c
}

func startEtcd(ctx context.Context, dir, bin string, opts EtcdOptions) (*Etcd, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	ports, err := FreePorts(2 * opts.Nodes)
	if err != nil {
		return nil, err
	}
	c := &Etcd{opts: opts, token: fmt.Sprintf("lh-%d", time.Now().UnixNano())}
	var initial []string
	for i := range opts.Nodes {
		n := &EtcdNode{
			Name:      fmt.Sprintf("n%d", i),
			ClientURL: fmt.Sprintf("http://%s:%d", opts.host(i), ports[2*i]),
			PeerURL:   fmt.Sprintf("http://%s:%d", opts.host(i), ports[2*i+1]),
			state:     "new",
		}
		n.Dir = filepath.Join(dir, n.Name)
		n.Process = NewProcess(Spec{Name: "etcd " + n.Name, Path: bin, Env: opts.Env, Prefix: opts.prefix(i),
			Log: filepath.Join(dir, n.Name+".log"), StopGrace: 300 * time.Millisecond})
		c.Nodes = append(c.Nodes, n)
		initial = append(initial, n.Name+"="+n.PeerURL)
	}
	c.initial = strings.Join(initial, ",")
	for i := range c.Nodes {
		if err := c.Restart(i); err != nil {
			c.Stop()
			return nil, err
		}
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := c.WaitHealthy(ctx); err != nil {
		logs := c.Logs()
		c.Stop()
		return nil, fmt.Errorf("%w\n%s", err, logs)
	}
	return c, nil
}

// args returns member n's command line.
func (c *Etcd) args(n *EtcdNode) []string {
	args := []string{
		"--name", n.Name,
		"--data-dir", n.Dir,
		"--listen-client-urls", n.ClientURL,
		"--advertise-client-urls", n.ClientURL,
		"--listen-peer-urls", n.PeerURL,
		"--initial-advertise-peer-urls", n.PeerURL,
		"--initial-cluster", c.initial,
		"--initial-cluster-state", n.state,
		"--initial-cluster-token", c.token,
		"--heartbeat-interval", fmt.Sprint(c.opts.Heartbeat.Milliseconds()),
		"--election-timeout", fmt.Sprint(c.opts.Election.Milliseconds()),
		"--log-level", "warn",
	}
	if c.opts.NoFsync {
		args = append(args, "--unsafe-no-fsync")
	}
	if c.opts.MaxRequestBytes > 0 {
		args = append(args, "--max-request-bytes", fmt.Sprint(c.opts.MaxRequestBytes))
	}
	return append(args, c.opts.Args...)
}

// Restart starts member i again on its data folder and ports, without
// waiting for it (a member alone has no quorum): see WaitHealthy.
func (c *Etcd) Restart(i int) error {
	n := c.Nodes[i]
	n.mu.Lock()
	defer n.mu.Unlock()
	n.SetArgs(c.args(n))
	if err := n.Launch(); err != nil {
		return err
	}
	n.state, n.down = "existing", false
	return nil
}

// Kill sends SIGKILL to member i and waits for it to exit.
func (c *Etcd) Kill(i int) { c.StopNode(i, 0) }

// StopNode sends SIGTERM to member i, then SIGKILL after grace.
func (c *Etcd) StopNode(i int, grace time.Duration) {
	n := c.Nodes[i]
	n.mu.Lock()
	n.down = true
	n.mu.Unlock()
	if grace == 0 {
		n.Process.Kill()
		return
	}
	n.Halt(syscall.SIGTERM, grace)
}

// Stop stops every member (SIGTERM, then SIGKILL after 300 ms: a member
// whose peers are gone waits seconds on SIGTERM) and removes the cluster's
// folder if StartEtcd made it.
func (c *Etcd) Stop() {
	var wg sync.WaitGroup
	for i := range c.Nodes {
		wg.Go(func() { c.StopNode(i, 300*time.Millisecond) })
	}
	wg.Wait()
	if c.rmDir != "" {
		_ = os.RemoveAll(c.rmDir)
	}
}

// Running reports whether member i's process runs.
func (c *Etcd) Running(i int) bool { return c.Nodes[i].Running() }

// PIDs returns the process ids of the running members.
func (c *Etcd) PIDs() []int { return pidsOf(c.processes()) }

// processes returns the members' processes.
func (c *Etcd) processes() []*Process {
	ps := make([]*Process, len(c.Nodes))
	for i, n := range c.Nodes {
		ps[i] = n.Process
	}
	return ps
}

// Endpoints returns the client URLs of all members.
func (c *Etcd) Endpoints() []string {
	var eps []string
	for _, n := range c.Nodes {
		eps = append(eps, n.ClientURL)
	}
	return eps
}

// URL returns the etcd:// URL of the cluster, for the etcd store's OpenURL.
func (c *Etcd) URL() string {
	var hs []string
	for _, n := range c.Nodes {
		hs = append(hs, strings.TrimPrefix(n.ClientURL, "http://"))
	}
	return "etcd://" + strings.Join(hs, ",")
}

// Logs returns the tail of every member's log, for failure messages.
func (c *Etcd) Logs() string { return logsOf(c.processes()) }
