package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// binary is the leasehold command built once for the tests that run it as
// a real process.
var binary string

func TestMain(m *testing.M) {
	// A run made in process (runApp) starts this binary as its watchdog.
	if len(os.Args) > 1 && os.Args[1] == watchdogCommand {
		os.Exit(watchdogMain(os.Args[2:], os.Stdin, os.Stdout, os.Stderr))
	}
	// A fuzz worker runs only its fuzz target, which never starts the
	// binary, and is killed when fuzzing ends, so goleak's clean-up below
	// would never remove a binary built here (112 MB left in the temp dir
	// per worker, per run).
	if isFuzzWorker(os.Args[1:]) {
		os.Exit(m.Run())
	}
	dir, err := os.MkdirTemp("", "leasehold-cmd-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binary = filepath.Join(dir, "leasehold")
	// go test puts its own GOROOT/bin first on PATH.
	build := exec.Command("go", "build", "-o", binary, ".")
	build.Env = append(os.Environ(), "GOWORK=off")
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "go build of the leasehold command failed: %v\n%s", err, out)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	goleak.VerifyTestMain(m, goleak.Cleanup(func(code int) {
		os.RemoveAll(dir)
		os.Exit(code)
	}))
}

// isFuzzWorker reports whether args are those of a worker process that go
// test -fuzz starts.
func isFuzzWorker(args []string) bool {
	for _, a := range args {
		if a == "-test.fuzzworker" || strings.HasPrefix(a, "-test.fuzzworker=") {
			return true
		}
	}
	return false
}

// env is the environment of a leasehold process under test: no LEASEHOLD_
// variables from outside, and a state directory of the test's own.
type env struct {
	t     *testing.T
	dir   string // the test's temp dir
	store string // its sqlite store URL
	mark  string // an environment variable that every process of the test inherits
}

func newEnv(t *testing.T) *env {
	dir := t.TempDir()
	e := &env{t: t, dir: dir, store: "sqlite://" + filepath.Join(dir, "leases.db"),
		mark: fmt.Sprintf("LHTEST_MARK=%d-%d", os.Getpid(), time.Now().UnixNano())}
	// Registered first, so it runs after every process's own cleanup:
	// commands run in process groups of their own, so killing a leasehold
	// process's group does not reach them. Any process still carrying the
	// mark once every leasehold process has exited is a leak.
	t.Cleanup(func() {
		deadline := time.Now().Add(3 * time.Second)
		for {
			left := marked(e.mark)
			if len(left) == 0 {
				return
			}
			if time.Now().After(deadline) {
				t.Errorf("processes left running after the test: %v", left)
				for _, pid := range left {
					syscall.Kill(pid, syscall.SIGKILL)
				}
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
	})
	return e
}

// marked returns the processes whose environment holds mark.
func marked(mark string) []int {
	dirs, _ := os.ReadDir("/proc")
	var pids []int
	for _, d := range dirs {
		pid, err := strconv.Atoi(d.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", d.Name(), "environ"))
		if err == nil && bytes.Contains(b, []byte("\x00"+mark+"\x00")) {
			pids = append(pids, pid)
		}
	}
	return pids
}

func (e *env) environ(extra ...string) []string {
	var out []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "LEASEHOLD_") && !strings.HasPrefix(kv, "XDG_STATE_HOME=") {
			out = append(out, kv)
		}
	}
	out = append(out, "XDG_STATE_HOME="+filepath.Join(e.dir, "state"), "LEASEHOLD_STORE="+e.store, e.mark)
	return append(out, extra...)
}

// proc is a leasehold process started by a test, in its own process group,
// killed (group and all) when the test ends.
type proc struct {
	cmd            *exec.Cmd
	stdout, stderr lockedBuffer // read by tests while the process writes
	done           chan struct{}
	code           int
}

// start starts leasehold with args and the extra environment variables.
func (e *env) start(extra []string, args ...string) *proc {
	e.t.Helper()
	return e.startCmd(binary, extra, args...)
}

// startCmd starts the program name (the leasehold binary, or a script that
// runs it) as start does.
func (e *env) startCmd(name string, extra []string, args ...string) *proc {
	e.t.Helper()
	p := &proc{done: make(chan struct{})}
	p.cmd = exec.Command(name, args...)
	p.cmd.Env = e.environ(extra...)
	p.cmd.Dir = e.dir
	p.cmd.Stdout, p.cmd.Stderr = &p.stdout, &p.stderr
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	p.cmd.WaitDelay = 2 * time.Second // a leaked command may hold the output pipes
	if err := p.cmd.Start(); err != nil {
		e.t.Fatalf("start %s: %v", name, err)
	}
	pid := p.cmd.Process.Pid
	go func() {
		defer close(p.done)
		p.cmd.Wait()
		p.code = p.cmd.ProcessState.ExitCode()
		if ws, ok := p.cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			p.code = 128 + int(ws.Signal())
		}
	}()
	e.t.Cleanup(func() {
		syscall.Kill(pid, syscall.SIGCONT)
		syscall.Kill(-pid, syscall.SIGKILL)
		<-p.done
	})
	return p
}

// wait waits for p to exit and returns its exit status, failing the test if
// it takes longer than limit.
func (p *proc) wait(t *testing.T, limit time.Duration) int {
	t.Helper()
	select {
	case <-p.done:
		return p.code
	case <-time.After(limit):
		syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
		<-p.done
		t.Fatalf("leasehold %s did not exit within %s; stderr:\n%s", strings.Join(p.cmd.Args[1:], " "), limit, p.stderr.String())
		return -1
	}
}

// lh runs leasehold to completion and returns its exit status and output.
func (e *env) lh(extra []string, args ...string) (int, string, string) {
	e.t.Helper()
	p := e.start(extra, args...)
	code := p.wait(e.t, 30*time.Second)
	return code, p.stdout.String(), p.stderr.String()
}

// waitFor polls cond until it holds, failing the test after limit.
func waitFor(t *testing.T, limit time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", limit, what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// readLines returns the lines of a file, none if it does not exist.
func readLines(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, l := range strings.Split(string(b), "\n") {
		if l != "" {
			lines = append(lines, l)
		}
	}
	return lines
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

func TestIsFuzzWorker(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want bool
	}{
		{nil, false},
		{[]string{"-test.run=^$", "-test.fuzz=^FuzzX$"}, false},
		{[]string{"-test.paniconexit0", "-test.fuzzworker", "-test.fuzz=^FuzzX$"}, true},
		{[]string{"-test.fuzzworker=true"}, true},
		{[]string{"-test.fuzzcachedir=/x"}, false},
	} {
		if got := isFuzzWorker(tc.args); got != tc.want {
			t.Errorf("isFuzzWorker(%q) = %v, want %v", tc.args, got, tc.want)
		}
	}
}
