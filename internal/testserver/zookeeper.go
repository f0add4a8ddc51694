package testserver

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// ZooKeeperJar is where Debian's zookeeper package (scripts/install/zookeeper.sh)
// puts the server; $LEASEHOLD_ZOOKEEPER_JAR overrides it.
const ZooKeeperJar = "/usr/share/java/zookeeper.jar"

// ZooKeeperOptions configure a ZooKeeper server or ensemble. The zero value
// is one standalone server with a 100 ms tick, session timeouts from 200 ms
// to 60 s, in a new folder under the system's temporary folder.
type ZooKeeperOptions struct {
	// Nodes is the number of servers; 0 means 1 (standalone). An ensemble
	// needs a majority of its servers running to serve.
	Nodes int
	// Tick is tickTime; 0 means 100 ms (ZooKeeper's default is 2 s). The
	// leader's election and follower sync limits are 10 and 5 ticks.
	Tick time.Duration
	// MinSession and MaxSession bound the session timeouts the servers
	// negotiate; 0 means 2 ticks and 60 s.
	MinSession, MaxSession time.Duration
	// Dir holds the servers' data, configuration and logs; "" means a new
	// folder under the system's temporary folder (NewZooKeeper: the
	// test's), removed by Stop.
	Dir string
	// Config holds more zoo.cfg lines ("key=value") for every server.
	Config []string
	// Env is added to the servers' environment.
	Env []string
	// JVMFlags are more java arguments for every server, before the class
	// (for example "-Dznode.container.checkIntervalMs=100": ZooKeeper reads
	// some settings only from system properties).
	JVMFlags []string
	// Hosts are the servers' addresses, one per server, for their client,
	// quorum and election ports; nil means 127.0.0.1 for all.
	Hosts []string
	// Prefix, if set, returns the argv prefix that starts server i (its
	// Spec.Prefix): e.g. `ip netns exec NAME`, to run the server in a
	// network namespace of its own, on its address of Hosts.
	Prefix func(i int) []string
}

// host returns server i's address.
func (o ZooKeeperOptions) host(i int) string {
	if i < len(o.Hosts) {
		return o.Hosts[i]
	}
	return "127.0.0.1"
}

// prefix returns server i's argv prefix.
func (o ZooKeeperOptions) prefix(i int) []string {
	if o.Prefix == nil {
		return nil
	}
	return o.Prefix(i)
}

// ZooKeeperNode is one server of an ensemble.
type ZooKeeperNode struct {
	*Process
	ID   int    // its myid, from 1
	Host string // its address (127.0.0.1 unless ZooKeeperOptions.Hosts)
	Port int    // its client port on Host
	Dir  string // its data folder and zoo.cfg
	// QuorumPort is the port on Host where it listens for its followers
	// while it leads (0 for a standalone server).
	QuorumPort int
}

// Addr returns the node's client address, host:port.
func (n *ZooKeeperNode) Addr() string { return net.JoinHostPort(n.Host, strconv.Itoa(n.Port)) }

// ZooKeeper is a running standalone server or ensemble.
type ZooKeeper struct {
	Nodes []*ZooKeeperNode

	mu    sync.Mutex
	rmDir string // removed by Stop
}

// StartZooKeeper starts the servers and waits until every one serves (a
// standalone server, or a leader and its followers). It retries with new
// ports if another process took one meanwhile.
func StartZooKeeper(ctx context.Context, opts ZooKeeperOptions) (*ZooKeeper, error) {
	java, err := FindBin("java", "zookeeper.sh")
	if err != nil {
		return nil, err
	}
	jar := os.Getenv("LEASEHOLD_ZOOKEEPER_JAR")
	if jar == "" {
		jar = ZooKeeperJar
	}
	if _, err := os.Stat(jar); err != nil {
		return nil, notInstalled(jar, "zookeeper.sh", []string{jar})
	}
	opts = opts.withDefaults()
	if opts.Hosts != nil && len(opts.Hosts) != opts.Nodes {
		return nil, fmt.Errorf("testserver: %d ZooKeeper hosts for %d servers", len(opts.Hosts), opts.Nodes)
	}
	var z *ZooKeeper
	rm, err := startAttempts(opts.Dir, "leasehold-zookeeper-", func(dir string) (err error) {
		z, err = startZooKeeper(ctx, dir, java, jar, opts)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("testserver: cannot start a %d-server ZooKeeper ensemble: %w", opts.Nodes, err)
	}
	z.rmDir = rm
	return z, nil
}

// NewZooKeeper starts servers for t (failing t if it cannot), with their
// data in t's temporary folder, and stops them when t ends.
func NewZooKeeper(t testing.TB, opts ZooKeeperOptions) *ZooKeeper {
	t.Helper()
	if opts.Dir == "" {
		opts.Dir = t.TempDir()
	}
	z, err := StartZooKeeper(t.Context(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(z.Stop)
	return z
}

func (o ZooKeeperOptions) withDefaults() ZooKeeperOptions {
	if o.Nodes == 0 {
		o.Nodes = 1
	}
	if o.Tick == 0 {
		o.Tick = 100 * time.Millisecond
	}
	if o.MinSession == 0 {
		o.MinSession = 2 * o.Tick
	}
	if o.MaxSession == 0 {
		o.MaxSession = time.Minute
	}
	return o
}

func startZooKeeper(ctx context.Context, dir, java, jar string, opts ZooKeeperOptions) (*ZooKeeper, error) {
	ports, err := FreePorts(3 * opts.Nodes)
	if err != nil {
		return nil, err
	}
	var servers []string
	for i := range opts.Nodes {
		if opts.Nodes > 1 {
			servers = append(servers, fmt.Sprintf("server.%d=%s:%d:%d", i+1, opts.host(i), ports[3*i+1], ports[3*i+2]))
		}
	}
	z := &ZooKeeper{}
	for i := range opts.Nodes {
		n := &ZooKeeperNode{ID: i + 1, Host: opts.host(i), Port: ports[3*i], Dir: filepath.Join(dir, fmt.Sprintf("zk%d", i+1))}
		if opts.Nodes > 1 {
			n.QuorumPort = ports[3*i+1]
		}
		cfg := filepath.Join(n.Dir, "zoo.cfg")
		if err := writeZooKeeperConfig(n, cfg, opts, servers); err != nil {
			return nil, err
		}
		n.Process = NewProcess(Spec{
			Name:   fmt.Sprintf("zookeeper %d on %s", n.ID, n.Addr()),
			Path:   java,
			Prefix: opts.prefix(i),
			Args: append(append([]string{"-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
				"-Dzookeeper.admin.enableServer=false",
				"-Dorg.slf4j.simpleLogger.showDateTime=true",
				"-Dorg.slf4j.simpleLogger.dateTimeFormat=HH:mm:ss.SSS"}, opts.JVMFlags...),
				"-cp", zooKeeperClassPath(jar), "org.apache.zookeeper.server.quorum.QuorumPeerMain", cfg),
			Env:          opts.Env,
			Log:          filepath.Join(n.Dir, "zookeeper.log"),
			Probe:        func(ctx context.Context) error { return zooKeeperServes(ctx, n.Addr()) },
			StopGrace:    300 * time.Millisecond,
			StartTimeout: 60 * time.Second, // a JVM starting on a loaded machine
		})
		z.Nodes = append(z.Nodes, n)
	}
	for _, n := range z.Nodes {
		if err := n.Launch(); err != nil {
			z.Stop()
			return nil, err
		}
	}
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	for _, n := range z.Nodes {
		if err := n.WaitReady(ctx); err != nil {
			logs := z.Logs()
			z.Stop()
			return nil, fmt.Errorf("%w\n%s", err, logs)
		}
	}
	return z, nil
}

// slf4jSimple is Debian's SLF4J binding that logs to standard error. With
// it on the class path the servers' own log (session establishment and
// expiry, elections) lands in each node's zookeeper.log; without it SLF4J
// discards everything.
const slf4jSimple = "/usr/share/java/slf4j-simple.jar"

// zooKeeperClassPath is jar, and slf4jSimple when it is installed.
func zooKeeperClassPath(jar string) string {
	if _, err := os.Stat(slf4jSimple); err == nil {
		return jar + string(os.PathListSeparator) + slf4jSimple
	}
	return jar
}

func writeZooKeeperConfig(n *ZooKeeperNode, path string, opts ZooKeeperOptions, servers []string) error {
	if err := os.MkdirAll(n.Dir, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(n.Dir, "myid"), fmt.Appendf(nil, "%d\n", n.ID), 0o644); err != nil {
		return err
	}
	lines := []string{
		fmt.Sprintf("tickTime=%d", opts.Tick.Milliseconds()),
		"initLimit=10",
		"syncLimit=5",
		"dataDir=" + n.Dir,
		fmt.Sprintf("clientPort=%d", n.Port),
		"clientPortAddress=" + n.Host,
		fmt.Sprintf("minSessionTimeout=%d", opts.MinSession.Milliseconds()),
		fmt.Sprintf("maxSessionTimeout=%d", opts.MaxSession.Milliseconds()),
		"4lw.commands.whitelist=srvr,ruok,mntr,stat",
		"admin.enableServer=false",
		"maxClientCnxns=0",
		"forceSync=no",
	}
	lines = append(lines, servers...)
	lines = append(lines, opts.Config...)
	return os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644)
}

// errNotServing means a server answered srvr but does not serve yet (it
// has no quorum, or is still loading).
var errNotServing = errors.New("testserver: the ZooKeeper server does not serve yet")

// zooKeeperServes asks addr "srvr" and reports whether it serves: ruok
// answers imok before a server can take sessions; srvr names its Mode only
// when it can.
func zooKeeperServes(ctx context.Context, addr string) error {
	out, err := fourLetterWord(ctx, addr, "srvr")
	if err != nil {
		return err
	}
	if _, ok := srvrMode(out); !ok {
		return fmt.Errorf("%w: srvr said %q", errNotServing, strings.TrimSpace(out))
	}
	return nil
}

// fourLetterWord sends one of ZooKeeper's four-letter commands to addr and
// returns the answer (the server closes the connection after it).
func fourLetterWord(ctx context.Context, addr, cmd string) (string, error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return "", err
	}
	defer c.Close()
	if dl, ok := ctx.Deadline(); ok {
		_ = c.SetDeadline(dl)
	} else {
		_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	}
	if _, err := io.WriteString(c, cmd); err != nil {
		return "", err
	}
	b, err := io.ReadAll(bufio.NewReader(c))
	return string(b), err
}

// PacketsReceived returns the packets the server at addr has received
// from clients (mntr's zk_packets_received): their requests, and their
// sessions' pings.
func PacketsReceived(ctx context.Context, addr string) (int64, error) {
	out, err := fourLetterWord(ctx, addr, "mntr")
	if err != nil {
		return 0, err
	}
	for line := range strings.Lines(out) {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "zk_packets_received"); ok {
			return strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		}
	}
	return 0, fmt.Errorf("mntr of %s: no zk_packets_received in %.200q", addr, out)
}

// WaitServing waits until every running server serves (after a restart or
// a leader's loss, a new election must finish).
func (z *ZooKeeper) WaitServing(ctx context.Context) error {
	for _, n := range z.Nodes {
		if n.Running() {
			if err := n.WaitReady(ctx); err != nil {
				return err
			}
		}
	}
	return nil
}

// Restart starts server i again on its data folder and port, without
// waiting for it: see WaitServing.
func (z *ZooKeeper) Restart(i int) error { return z.Nodes[i].Launch() }

// Kill sends SIGKILL to server i and waits for it to exit.
func (z *ZooKeeper) Kill(i int) { z.Nodes[i].Process.Kill() }

// Stop stops every server (SIGTERM, then SIGKILL after 300 ms) and removes
// the ensemble's folder if StartZooKeeper made it.
func (z *ZooKeeper) Stop() {
	var wg sync.WaitGroup
	for _, n := range z.Nodes {
		wg.Go(func() { n.Halt(syscall.SIGTERM, 300*time.Millisecond) })
	}
	wg.Wait()
	z.mu.Lock()
	defer z.mu.Unlock()
	if z.rmDir != "" {
		_ = os.RemoveAll(z.rmDir)
		z.rmDir = ""
	}
}

// Servers returns the client addresses of all servers, comma-separated:
// the connection string of ZooKeeper's clients.
func (z *ZooKeeper) Servers() string {
	var hs []string
	for _, n := range z.Nodes {
		hs = append(hs, n.Addr())
	}
	return strings.Join(hs, ",")
}

// URL returns the zk:// URL of the ensemble under chroot ("" for none),
// for the zookeeper store's OpenURL.
func (z *ZooKeeper) URL(chroot string) string {
	return "zk://" + z.Servers() + "/" + strings.TrimPrefix(chroot, "/")
}

// PIDs returns the process ids of the running servers.
func (z *ZooKeeper) PIDs() []int { return pidsOf(z.processes()) }

// processes returns the servers' processes.
func (z *ZooKeeper) processes() []*Process {
	ps := make([]*Process, len(z.Nodes))
	for i, n := range z.Nodes {
		ps[i] = n.Process
	}
	return ps
}

// Logs returns the tail of every server's log, for failure messages.
func (z *ZooKeeper) Logs() string { return logsOf(z.processes()) }
