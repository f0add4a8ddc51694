package netlab_test

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/leasehold-go/leasehold/faults/netlab"
)

// roleEnv makes the test binary, run in a member's namespace, a listener
// (echo one line per connection) or a dialer (exit 0 when the echo came).
const roleEnv = "NETLAB_TEST_ROLE"

// limitEnv bounds a dialer's wait.
const limitEnv = "NETLAB_TEST_LIMIT"

func TestMain(m *testing.M) {
	// The main goroutine keeps the main thread, so that no goroutine that
	// enters another network namespace (netnsCookie) ever runs on it.
	runtime.LockOSThread()
	switch os.Getenv(roleEnv) {
	case "lab":
		labThenWait()
	case "listen":
		listen(os.Args[len(os.Args)-1])
	case "dial":
		limit, _ := time.ParseDuration(os.Getenv(limitEnv))
		if err := dial(os.Args[len(os.Args)-1], limit); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	if err := netlab.Enter(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	goleak.VerifyTestMain(m)
}

func listen(addr string) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println("listening")
	for {
		c, err := ln.Accept()
		if err != nil {
			os.Exit(1)
		}
		go func() {
			defer c.Close()
			line, _ := bufio.NewReader(c).ReadString('\n')
			_, _ = c.Write([]byte(line))
		}()
	}
}

// dial connects to addr and checks its echo, within limit.
func dial(addr string, limit time.Duration) error {
	c, err := net.DialTimeout("tcp", addr, limit)
	if err != nil {
		return err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(limit))
	if _, err := c.Write([]byte("ping\n")); err != nil {
		return err
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil || line != "ping\n" {
		return fmt.Errorf("echo %q: %v", line, err)
	}
	return nil
}

// inMember starts the test binary in member i's namespace with role.
func inMember(t *testing.T, lab *netlab.Lab, i int, role, addr string) *exec.Cmd {
	t.Helper()
	argv := append(lab.Prefix(i), os.Args[0], "-test.run=^$", addr)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), roleEnv+"="+role)
	return cmd
}

// serve runs a listener on member i's address and port, until the test ends.
func serve(t *testing.T, lab *netlab.Lab, i int, port int) string {
	t.Helper()
	addr := net.JoinHostPort(lab.Addr(i), fmt.Sprint(port))
	cmd := inMember(t, lab, i, "listen", addr)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	if line, err := bufio.NewReader(out).ReadString('\n'); line != "listening\n" {
		t.Fatalf("listener on member %d: %q %v", i, line, err)
	}
	return addr
}

// reaches reports whether member from completes an echo with addr (within
// 10 s: a loaded machine is slow, a cut link never answers).
func reaches(t *testing.T, lab *netlab.Lab, from int, addr string) bool {
	t.Helper()
	return try(t, lab, from, addr, 10*time.Second)
}

// cut reports whether member from fails to reach addr within a second (a
// cut link drops the SYN: the dial can only time out).
func cut(t *testing.T, lab *netlab.Lab, from int, addr string) bool {
	t.Helper()
	return !try(t, lab, from, addr, time.Second)
}

func try(t *testing.T, lab *netlab.Lab, from int, addr string, limit time.Duration) bool {
	t.Helper()
	cmd := inMember(t, lab, from, "dial", addr)
	cmd.Env = append(cmd.Env, limitEnv+"="+limit.String())
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Logf("member %d -> %s: %v: %s", from, addr, err, strings.TrimSpace(string(out)))
	}
	return err == nil
}

func TestCutIsolateHeal(t *testing.T) {
	ctx := t.Context()
	lab, err := netlab.New(ctx, 3)
	if err != nil {
		t.Fatal(err)
	}
	defer lab.Close()
	a0, a1, a2 := serve(t, lab, 0, 7000), serve(t, lab, 1, 7000), serve(t, lab, 2, 7000)
	if !reaches(t, lab, 0, a1) || !reaches(t, lab, 1, a0) {
		t.Fatal("members 0 and 1 cannot talk before any cut")
	}
	if err := lab.Cut(ctx, 0, 1); err != nil {
		t.Fatal(err)
	}
	if !cut(t, lab, 0, a1) || !cut(t, lab, 1, a0) {
		t.Fatal("members 0 and 1 still talk after Cut(0, 1)")
	}
	if !reaches(t, lab, 0, a2) || !reaches(t, lab, 2, a1) {
		t.Fatal("Cut(0, 1) cut member 2 too")
	}
	for _, a := range []string{a0, a1} {
		if err := dial(a, 10*time.Second); err != nil {
			t.Fatalf("the root namespace cannot reach %s while 0 and 1 are cut: %v", a, err)
		}
	}
	if got := fmt.Sprint(lab.Cuts()); got != "[[0 1]]" {
		t.Fatalf("Cuts() = %s", got)
	}
	if err := lab.Heal(ctx); err != nil {
		t.Fatal(err)
	}
	if !reaches(t, lab, 0, a1) || !reaches(t, lab, 1, a0) {
		t.Fatal("members 0 and 1 cannot talk after Heal")
	}
	if err := lab.Isolate(ctx, 2); err != nil {
		t.Fatal(err)
	}
	if !cut(t, lab, 2, a0) || !cut(t, lab, 1, a2) || !reaches(t, lab, 0, a1) {
		t.Fatal("Isolate(2) did not cut exactly member 2 from the others")
	}
	if err := dial(a2, 10*time.Second); err != nil {
		t.Fatalf("the root namespace cannot reach the isolated member: %v", err)
	}
}

func TestCloseLeavesNothing(t *testing.T) {
	lab, err := netlab.New(t.Context(), 2)
	if err != nil {
		t.Fatal(err)
	}
	names := []string{lab.Namespace(0), lab.Namespace(1)}
	var ids []nsRef
	for _, ns := range names {
		id, err := netnsRef(filepath.Join("/var/run/netns", ns))
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	if err := lab.Cut(t.Context(), 0, 1); err != nil {
		t.Fatal(err)
	}
	if err := lab.Close(); err != nil {
		t.Fatal(err)
	}
	for _, ns := range names {
		if _, err := os.Stat(filepath.Join("/var/run/netns", ns)); !os.IsNotExist(err) {
			t.Errorf("namespace %s left after Close: %v", ns, err)
		}
	}
	for i, id := range ids {
		waitGone(t, "member namespace "+names[i], id)
	}
	out, err := exec.Command("ip", "-o", "addr", "show").CombinedOutput()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(out), lab.RootAddr()) {
		t.Errorf("the bridge's address %s is left after Close:\n%s", lab.RootAddr(), out)
	}
}

func TestEnterIsPrivate(t *testing.T) {
	if !netlab.Inside() {
		t.Fatal("the test process is not inside the private namespace")
	}
	self, err1 := os.Readlink("/proc/self/ns/net")
	// The parent is the process Enter re-executed from, in the host's
	// namespace.
	host, err2 := os.Readlink(fmt.Sprintf("/proc/%d/ns/net", os.Getppid()))
	if err1 != nil || err2 != nil {
		t.Fatal(err1, err2)
	}
	if self == host {
		t.Fatalf("the test runs in its parent's network namespace %s", self)
	}
	if out, err := exec.Command("ip", "netns", "list").CombinedOutput(); err != nil {
		t.Fatalf("ip netns list: %v: %s", err, out)
	}
}

func TestNewOutsideRefused(t *testing.T) {
	t.Setenv(netlab.Env, "off")
	if _, err := netlab.New(context.Background(), 2); err != netlab.ErrNotInside {
		t.Fatalf("New outside the namespace: %v, want ErrNotInside", err)
	}
}

// labThenWait is a run of its own (Enter from outside), which builds a lab,
// prints its pid, a namespace's name and the bridge's address, and waits
// to be killed.
func labThenWait() {
	if err := netlab.Enter(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	lab, err := netlab.New(context.Background(), 2)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println(os.Getpid(), lab.Namespace(0), lab.RootAddr())
	select {}
}

// A run killed with SIGKILL leaves nothing of its lab in the namespace it
// was started from: its namespaces and bridge went with its own private
// namespace.
func TestKilledRunLeavesNothing(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, netlab.Env+"=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, roleEnv+"=lab")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var pid int
	var ns, addr string
	if _, err := fmt.Fscan(bufio.NewReader(out), &pid, &ns, &addr); err != nil {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		t.Fatalf("the run printed no lab: %v", err)
	}
	if pid == cmd.Process.Pid {
		t.Errorf("the run did not re-execute itself (pid %d)", pid)
	}
	// The run's private namespace and its member's, named from the whole
	// machine: the member's handle is a mount in the run's own mount
	// namespace, reached through its root (with /var/run's link resolved
	// here: an absolute link would leave that root).
	runNS, err1 := netnsRef(fmt.Sprintf("/proc/%d/ns/net", pid))
	dir, _ := filepath.EvalSymlinks("/var/run")
	memberNS, err2 := netnsRef(fmt.Sprintf("/proc/%d/root%s/netns/%s", pid, dir, ns))
	if err1 != nil || err2 != nil {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		t.Fatal(err1, err2)
	}
	if len(netnsHolders(memberNS)) == 0 {
		t.Errorf("the live run's member namespace %s shows no holder: the check below could not fail", memberNS)
	}
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	for end := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if _, err := os.Stat(fmt.Sprintf("/proc/%d", pid)); os.IsNotExist(err) {
			break
		}
		if time.Now().After(end) {
			t.Fatalf("the re-executed run (pid %d) outlived its parent's SIGKILL by 30 s", pid)
		}
	}
	waitGone(t, "the killed run's private namespace", runNS)
	waitGone(t, "the killed run's member namespace "+ns, memberNS)
	if _, err := os.Stat(filepath.Join("/var/run/netns", ns)); !os.IsNotExist(err) {
		t.Errorf("the killed run's namespace %s is here: %v", ns, err)
	}
	links, err := exec.Command("ip", "-o", "addr", "show").CombinedOutput()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(links), " "+addr+"/") {
		t.Errorf("the killed run's bridge address %s is here:\n%s", addr, links)
	}
}
