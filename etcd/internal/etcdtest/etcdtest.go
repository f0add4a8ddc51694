// Package etcdtest starts real etcd server processes (a single node or a
// cluster) on free loopback ports with data in a temporary folder, for the
// etcd store's tests and benchmarks. The server binary is the one
// scripts/install/etcd.sh builds; a missing binary fails the test.
package etcdtest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
)

// Binary returns the path of the etcd server: $LEASEHOLD_BIN/etcd,
// $HOME/.cache/leasehold/bin/etcd, or etcd on PATH.
func Binary() (string, error) {
	var dirs []string
	if d := os.Getenv("LEASEHOLD_BIN"); d != "" {
		dirs = append(dirs, d)
	}
	if h, err := os.UserHomeDir(); err == nil {
		dirs = append(dirs, filepath.Join(h, ".cache", "leasehold", "bin"))
	}
	for _, d := range dirs {
		p := filepath.Join(d, "etcd")
		if st, err := os.Stat(p); err == nil && !st.IsDir() && st.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	if p, err := exec.LookPath("etcd"); err == nil {
		return p, nil
	}
	return "", errors.New("etcd server binary not found in $LEASEHOLD_BIN, ~/.cache/leasehold/bin or PATH: run scripts/install/etcd.sh")
}

// Options configure a cluster. The zero value is a single node with fast
// elections.
type Options struct {
	Nodes int // members; 0 means 1
	// Heartbeat and Election are the raft timings; 0 means 25 ms and 250 ms
	// (etcd's defaults are 100 ms and 1 s). The minimum lease TTL etcd
	// grants is 1.5 elections, so 250 ms still allows 1 s leases.
	Heartbeat, Election time.Duration
	// NoFsync runs with --unsafe-no-fsync.
	NoFsync bool
	// MaxRequestBytes is --max-request-bytes; 0 means etcd's default (1.5 MiB).
	MaxRequestBytes int
}

// Node is one etcd member process.
type Node struct {
	Name      string
	ClientURL string
	PeerURL   string
	dir       string
	logPath   string

	mu    sync.Mutex
	cmd   *exec.Cmd
	logf  *os.File
	dead  bool   // the process exited and was reaped
	state string // "new" for the first start, "existing" after
}

// The processes are reaped with wait4 rather than a goroutine per process,
// so that goroutine-leak checks around a restart see no new goroutines.

// exitedLocked reports whether n's process has exited, reaping it. n.mu held.
func (n *Node) exitedLocked() bool {
	if n.cmd == nil || n.dead {
		return true
	}
	var ws syscall.WaitStatus
	pid, err := syscall.Wait4(n.cmd.Process.Pid, &ws, syscall.WNOHANG, nil)
	if pid == n.cmd.Process.Pid || (err != nil && err != syscall.EINTR) {
		n.dead = true
	}
	return n.dead
}

// reapLocked waits for n's process to exit. n.mu held.
func (n *Node) reapLocked() {
	for !n.dead {
		var ws syscall.WaitStatus
		pid, err := syscall.Wait4(n.cmd.Process.Pid, &ws, 0, nil)
		if pid == n.cmd.Process.Pid || (err != nil && err != syscall.EINTR) {
			n.dead = true
		}
	}
	_ = n.logf.Close()
	n.cmd = nil
}

// Cluster is a set of etcd members started by Start.
type Cluster struct {
	Nodes   []*Node
	opts    Options
	bin     string
	initial string // --initial-cluster
	token   string
}

// Start starts a cluster, waits until it has a leader, and stops it when t
// ends (SIGTERM, SIGKILL after a short grace). It retries with new ports if
// another process took one meanwhile.
func Start(t testing.TB, opts Options) *Cluster {
	t.Helper()
	bin, err := Binary()
	if err != nil {
		t.Fatal(err)
	}
	c, err := startRetry(t.TempDir(), bin, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Stop)
	return c
}

// StartDir is Start for a TestMain: data goes under dir, and the caller
// calls Stop.
func StartDir(dir string, opts Options) (*Cluster, error) {
	bin, err := Binary()
	if err != nil {
		return nil, err
	}
	return startRetry(dir, bin, opts)
}

func startRetry(dir, bin string, opts Options) (*Cluster, error) {
	if opts.Nodes == 0 {
		opts.Nodes = 1
	}
	if opts.Heartbeat == 0 {
		opts.Heartbeat = 25 * time.Millisecond
	}
	if opts.Election == 0 {
		opts.Election = 250 * time.Millisecond
	}
	var lastErr error
	for attempt := 0; attempt < 3; attempt++ {
		c, err := start(filepath.Join(dir, fmt.Sprint(attempt)), bin, opts)
		if err == nil {
			return c, nil
		}
		lastErr = err
	}
	return nil, fmt.Errorf("etcdtest: cannot start a %d-node etcd cluster: %w", opts.Nodes, lastErr)
}

func start(dir, bin string, opts Options) (*Cluster, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	ports, err := freePorts(2 * opts.Nodes)
	if err != nil {
		return nil, err
	}
	c := &Cluster{opts: opts, bin: bin, token: fmt.Sprintf("lh-%d", time.Now().UnixNano())}
	var initial []string
	for i := 0; i < opts.Nodes; i++ {
		n := &Node{
			Name:      fmt.Sprintf("n%d", i),
			ClientURL: fmt.Sprintf("http://127.0.0.1:%d", ports[2*i]),
			PeerURL:   fmt.Sprintf("http://127.0.0.1:%d", ports[2*i+1]),
			state:     "new",
		}
		n.dir = filepath.Join(dir, n.Name)
		n.logPath = filepath.Join(dir, n.Name+".log")
		c.Nodes = append(c.Nodes, n)
		initial = append(initial, n.Name+"="+n.PeerURL)
	}
	c.initial = strings.Join(initial, ",")
	for i := range c.Nodes {
		if err := c.launch(i); err != nil {
			c.Stop()
			return nil, err
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := c.WaitHealthy(ctx); err != nil {
		logs := c.Logs()
		c.Stop()
		return nil, fmt.Errorf("%w\n%s", err, logs)
	}
	return c, nil
}

// freePorts returns n distinct loopback ports that were free a moment ago.
func freePorts(n int) ([]int, error) {
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			_ = l.Close()
		}
	}()
	var ports []int
	for i := 0; i < n; i++ {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// launch starts member i's process.
func (c *Cluster) launch(i int) error {
	n := c.Nodes[i]
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.cmd != nil {
		return fmt.Errorf("etcdtest: %s is already running", n.Name)
	}
	args := []string{
		"--name", n.Name,
		"--data-dir", n.dir,
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
	logf, err := os.OpenFile(n.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	cmd := exec.Command(c.bin, args...)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		_ = logf.Close()
		return err
	}
	n.cmd, n.logf, n.dead, n.state = cmd, logf, false, "existing"
	return nil
}

// Endpoints returns the client URLs of all members.
func (c *Cluster) Endpoints() []string {
	var eps []string
	for _, n := range c.Nodes {
		eps = append(eps, n.ClientURL)
	}
	return eps
}

// URL returns the etcd:// URL of the cluster for etcd.OpenURL.
func (c *Cluster) URL() string {
	var hs []string
	for _, n := range c.Nodes {
		hs = append(hs, strings.TrimPrefix(n.ClientURL, "http://"))
	}
	return "etcd://" + strings.Join(hs, ",")
}

// Client returns a new client on all members, closed when t ends.
func (c *Cluster) Client(t testing.TB) *clientv3.Client {
	t.Helper()
	cli, err := clientv3.New(clientv3.Config{
		Endpoints:   c.Endpoints(),
		DialTimeout: 5 * time.Second,
		Logger:      zap.NewNop(),
	})
	if err != nil {
		t.Fatalf("etcdtest: client: %v", err)
	}
	t.Cleanup(func() { _ = cli.Close() })
	return cli
}

// PIDs returns the process ids of the running members.
func (c *Cluster) PIDs() []int {
	var pids []int
	for _, n := range c.Nodes {
		n.mu.Lock()
		if n.cmd != nil && !n.dead {
			pids = append(pids, n.cmd.Process.Pid)
		}
		n.mu.Unlock()
	}
	return pids
}

// Running reports whether member i's process is running.
func (c *Cluster) Running(i int) bool {
	n := c.Nodes[i]
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.cmd != nil && !n.exitedLocked()
}

// Kill sends SIGKILL to member i and waits for it to exit.
func (c *Cluster) Kill(i int) { c.stop(i, 0) }

// StopNode sends SIGTERM to member i, then SIGKILL after grace.
func (c *Cluster) StopNode(i int, grace time.Duration) { c.stop(i, grace) }

func (c *Cluster) stop(i int, grace time.Duration) {
	n := c.Nodes[i]
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.cmd == nil {
		return
	}
	pgid := n.cmd.Process.Pid
	if grace > 0 && !n.exitedLocked() {
		_ = syscall.Kill(-pgid, syscall.SIGTERM)
		for end := time.Now().Add(grace); time.Now().Before(end) && !n.exitedLocked(); {
			time.Sleep(10 * time.Millisecond)
		}
	}
	if !n.exitedLocked() {
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
	}
	n.reapLocked()
}

// Restart starts member i again on its data folder and ports.
func (c *Cluster) Restart(i int) error { return c.launch(i) }

// Stop stops every member: SIGTERM, then SIGKILL after a short grace (a
// member whose peers are gone waits seconds on SIGTERM).
func (c *Cluster) Stop() {
	var wg sync.WaitGroup
	for i := range c.Nodes {
		wg.Go(func() { c.stop(i, 300*time.Millisecond) })
	}
	wg.Wait()
}

// WaitHealthy waits until every running member reports healthy (it has a
// leader and answers reads).
func (c *Cluster) WaitHealthy(ctx context.Context) error {
	tr := &http.Transport{DisableKeepAlives: true}
	defer tr.CloseIdleConnections()
	hc := &http.Client{Timeout: time.Second, Transport: tr}
	for i, n := range c.Nodes {
		n.mu.Lock()
		started := n.cmd != nil
		n.mu.Unlock()
		if !started {
			continue
		}
		for {
			if !c.Running(i) {
				return fmt.Errorf("etcdtest: %s exited during start-up", n.Name)
			}
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, n.ClientURL+"/health", nil)
			resp, err := hc.Do(req)
			if err == nil {
				var b bytes.Buffer
				_, _ = b.ReadFrom(resp.Body)
				_ = resp.Body.Close()
				if resp.StatusCode == http.StatusOK && strings.Contains(b.String(), `"health":"true"`) {
					break
				}
			}
			select {
			case <-ctx.Done():
				return fmt.Errorf("etcdtest: %s not healthy: %w (last error %v)", n.Name, ctx.Err(), err)
			case <-time.After(20 * time.Millisecond):
			}
		}
	}
	return nil
}

// Leader returns the index of the current leader among running members.
func (c *Cluster) Leader(ctx context.Context) (int, error) {
	for {
		for i, n := range c.Nodes {
			if !c.Running(i) {
				continue
			}
			cli, err := clientv3.New(clientv3.Config{Endpoints: []string{n.ClientURL}, DialTimeout: time.Second, Logger: zap.NewNop()})
			if err != nil {
				continue
			}
			sctx, cancel := context.WithTimeout(ctx, time.Second)
			st, err := cli.Status(sctx, n.ClientURL)
			cancel()
			_ = cli.Close()
			if err == nil && st.Leader != 0 && st.Leader == st.Header.MemberId {
				return i, nil
			}
		}
		select {
		case <-ctx.Done():
			return -1, fmt.Errorf("etcdtest: no leader: %w", ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// Logs returns the tail of every member's log, for failure messages.
func (c *Cluster) Logs() string {
	var b strings.Builder
	for _, n := range c.Nodes {
		data, _ := os.ReadFile(n.logPath)
		if len(data) > 4000 {
			data = data[len(data)-4000:]
		}
		fmt.Fprintf(&b, "--- %s log (tail) ---\n%s\n", n.Name, data)
	}
	return b.String()
}
