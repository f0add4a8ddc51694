package netlab

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
)

// ErrNotInside means New was called outside the private namespace Enter
// makes: the lab would change the host's network.
var ErrNotInside = errors.New("netlab: not inside the private network namespace (call Enter first)")

// Lab is a set of member network namespaces joined by a bridge in the
// process's (private) namespace: member i has address 10.77.X.(i+1), the
// bridge 10.77.X.254, so the process reaches every member and the members
// reach each other, until Cut or Isolate drops the packets between two of
// them. Its methods are safe for concurrent use.
type Lab struct {
	id     string // random hex, in the names of its namespaces and links
	net    string // "10.77.X."
	bridge string
	ns     []string

	mu   sync.Mutex
	cuts map[[2]int]bool // a < b
}

// New builds a lab of n members. It must run inside the namespace Enter
// made (else ErrNotInside); it needs ip (iproute2) and nft (nftables:
// scripts/install/nftables.sh). On failure nothing of the lab is left.
func New(ctx context.Context, n int) (lab *Lab, err error) {
	if !Inside() {
		return nil, ErrNotInside
	}
	if n < 1 || n > 250 {
		return nil, fmt.Errorf("netlab: %d members (1 to 250)", n)
	}
	for _, tool := range []string{"ip", "nft"} {
		if _, err := exec.LookPath(tool); err != nil {
			return nil, fmt.Errorf("netlab: %w (install iproute2 and nftables: scripts/install/nftables.sh)", err)
		}
	}
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	l := &Lab{id: hex.EncodeToString(b), cuts: map[[2]int]bool{}}
	l.bridge = "lhb" + l.id
	for i := range n {
		l.ns = append(l.ns, fmt.Sprintf("lh-%s-%d", l.id, i))
	}
	unlock, err := lockLabs()
	if err != nil {
		return nil, err
	}
	defer unlock()
	if l.net, err = freeSubnet(ctx); err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			_ = l.Close()
		}
	}()
	if err := l.build(ctx); err != nil {
		return nil, err
	}
	return l, nil
}

// lockLabs takes a lock that New holds while it picks a subnet, so that
// two labs of one process never share one. The lock file lives in the
// private tmpfs Enter mounted.
func lockLabs() (func(), error) {
	f, err := os.OpenFile(filepath.Join(netnsDir, ".netlab.lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("netlab: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, fmt.Errorf("netlab: lock: %w", err)
	}
	return func() { f.Close() }, nil
}

// freeSubnet returns the first 10.77.X. prefix no address of the process's
// namespace is in.
func freeSubnet(ctx context.Context) (string, error) {
	out, err := run(ctx, "ip", "-o", "-4", "addr", "show")
	if err != nil {
		return "", err
	}
	for x := range 256 {
		p := fmt.Sprintf("10.77.%d.", x)
		if !strings.Contains(out, " "+p) {
			return p, nil
		}
	}
	return "", errors.New("netlab: every 10.77.X.0/24 is in use")
}

// build makes the bridge and the members.
func (l *Lab) build(ctx context.Context) error {
	steps := [][]string{
		{"ip", "link", "add", l.bridge, "type", "bridge"},
		{"ip", "addr", "add", l.net + "254/24", "dev", l.bridge},
		{"ip", "link", "set", l.bridge, "up"},
	}
	for i, ns := range l.ns {
		veth := fmt.Sprintf("lhv%s%d", l.id, i)
		steps = append(steps,
			[]string{"ip", "netns", "add", ns},
			[]string{"ip", "link", "add", veth, "type", "veth", "peer", "name", "eth0", "netns", ns},
			[]string{"ip", "link", "set", veth, "master", l.bridge, "up"},
			[]string{"ip", "-n", ns, "addr", "add", l.Addr(i) + "/24", "dev", "eth0"},
			[]string{"ip", "-n", ns, "link", "set", "eth0", "up"},
			[]string{"ip", "-n", ns, "link", "set", "lo", "up"},
			[]string{"ip", "netns", "exec", ns, "nft", "add table inet netlab; add chain inet netlab input { type filter hook input priority 0; policy accept; }"},
		)
	}
	for _, s := range steps {
		if _, err := run(ctx, s[0], s[1:]...); err != nil {
			return err
		}
	}
	return nil
}

// Members returns the number of members.
func (l *Lab) Members() int { return len(l.ns) }

// Addr returns member i's address (an IPv4 address, no port).
func (l *Lab) Addr(i int) string { return fmt.Sprintf("%s%d", l.net, i+1) }

// RootAddr returns the address of the process's namespace on the lab's
// bridge: the address the members see the holders' traffic come from.
func (l *Lab) RootAddr() string { return l.net + "254" }

// Namespace returns member i's network namespace's name (for `ip netns`).
func (l *Lab) Namespace(i int) string { return l.ns[i] }

// Prefix returns the argv prefix that runs a command in member i's
// namespace: `ip netns exec NAME`, which execs the command (its process id
// is the command's).
func (l *Lab) Prefix(i int) []string {
	return []string{"ip", "netns", "exec", l.ns[i]}
}

// Cut drops every packet between members a and b, both ways (each drops
// what comes from the other), until Heal. The process's namespace still
// reaches both.
func (l *Lab) Cut(ctx context.Context, a, b int) error {
	if a == b || a < 0 || b < 0 || a >= len(l.ns) || b >= len(l.ns) {
		return fmt.Errorf("netlab: cannot cut member %d from member %d (%d members)", a, b, len(l.ns))
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	k := [2]int{min(a, b), max(a, b)}
	if l.cuts[k] {
		return nil
	}
	for _, p := range [][2]int{{a, b}, {b, a}} {
		if _, err := run(ctx, "ip", "netns", "exec", l.ns[p[0]], "nft", "add", "rule", "inet", "netlab", "input", "ip", "saddr", l.Addr(p[1]), "drop"); err != nil {
			return err
		}
	}
	l.cuts[k] = true
	return nil
}

// Isolate cuts member i from every other member; the process's namespace
// (the holders' proxies) still reaches it.
func (l *Lab) Isolate(ctx context.Context, i int) error {
	for j := range l.ns {
		if j != i {
			if err := l.Cut(ctx, i, j); err != nil {
				return err
			}
		}
	}
	return nil
}

// Cuts returns the member pairs that are cut, each as {a, b} with a < b,
// in order.
func (l *Lab) Cuts() [][2]int {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out [][2]int
	for k := range l.cuts {
		out = append(out, k)
	}
	slices.SortFunc(out, func(x, y [2]int) int {
		if x[0] != y[0] {
			return x[0] - y[0]
		}
		return x[1] - y[1]
	})
	return out
}

// Heal removes every cut.
func (l *Lab) Heal(ctx context.Context) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	var errs []error
	for _, ns := range l.ns {
		if _, err := run(ctx, "ip", "netns", "exec", ns, "nft", "flush", "chain", "inet", "netlab", "input"); err != nil {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	clear(l.cuts)
	return nil
}

// Close removes the members' namespaces (their veths go with them) and the
// bridge. Processes still running in a member keep its namespace alive
// (without a name) until they exit.
func (l *Lab) Close() error {
	var errs []error
	for _, ns := range l.ns {
		if _, err := os.Stat(filepath.Join(netnsDir, ns)); err == nil {
			if _, err := run(context.Background(), "ip", "netns", "del", ns); err != nil {
				errs = append(errs, err)
			}
		}
	}
	if _, err := run(context.Background(), "ip", "link", "show", l.bridge); err == nil {
		if _, err := run(context.Background(), "ip", "link", "del", l.bridge); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// run runs a command and returns its output; a failure's error names the
// command and holds its output.
func run(ctx context.Context, name string, args ...string) (string, error) {
	var out bytes.Buffer
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return out.String(), fmt.Errorf("netlab: %s %s: %w: %s", name, strings.Join(args, " "), err, strings.TrimSpace(out.String()))
	}
	return out.String(), nil
}
