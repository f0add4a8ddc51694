package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/leasehold-go/leasehold/internal/testserver"
)

func TestParseSpecs(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string // name kind arg, space-separated per spec; or the error's text
	}{
		{[]string{"redis"}, "redis redis "},
		{[]string{"rl1=redis", "e3=etcd:3", "etcd:1"}, "rl1 redis |e3 etcd 3|etcd etcd 1"},
		{[]string{"gw=versitygw:bench"}, "gw versitygw bench"},
		{nil, "no server named"},
		{[]string{"a-b=redis"}, "not a shell identifier"},
		{[]string{"x=redis", "x=postgres"}, "given twice"},
		{[]string{"x=mysql"}, `no server kind "mysql"`},
		{[]string{"x=redis:2"}, "redis takes no argument"},
	} {
		specs, err := parseSpecs(c.args)
		var got []string
		for _, s := range specs {
			got = append(got, s.name+" "+s.kind.name+" "+s.arg)
		}
		if err != nil {
			if !strings.Contains(err.Error(), c.want) {
				t.Errorf("parseSpecs(%q): %v, want an error saying %q", c.args, err, c.want)
			}
			continue
		}
		if g := strings.Join(got, "|"); g != c.want {
			t.Errorf("parseSpecs(%q) = %q, want %q", c.args, g, c.want)
		}
	}
}

// bin is the command, built by TestMain.
var bin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "servers-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	bin = filepath.Join(dir, "servers")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "go build: %v\n%s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	_ = os.RemoveAll(dir)
	os.Exit(code)
}

// running is the command started by startCommand, its servers up.
type running struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	vars   map[string]string
	tmp    string // its TMPDIR
	stderr *bytes.Buffer
}

// startCommand runs the command with args until it prints READY, and
// returns it with the keys it printed.
func startCommand(t *testing.T, args ...string) *running {
	t.Helper()
	// A short folder: PostgreSQL's socket path is at most 107 bytes.
	tmp, err := os.MkdirTemp("", "srv")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(tmp) })
	r := &running{cmd: exec.Command(bin, args...), vars: map[string]string{}, tmp: tmp, stderr: &bytes.Buffer{}}
	r.cmd.Env = append(os.Environ(), "TMPDIR="+r.tmp)
	r.cmd.Stderr = r.stderr
	if r.stdin, err = r.cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	out, err := r.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := r.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.cmd.Process.Kill(); _ = r.cmd.Wait() })
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		if sc.Text() == "READY" {
			return r
		}
		k, v, ok := strings.Cut(sc.Text(), "=")
		if !ok {
			t.Fatalf("the command printed %q, not KEY=VALUE", sc.Text())
		}
		r.vars[k] = v
	}
	_ = r.cmd.Wait()
	t.Fatalf("the command ended before READY (%v); stderr:\n%s", r.cmd.ProcessState, r.stderr)
	return nil
}

// pgids returns the process ids NAME_PIDS lists: each server's group.
func (r *running) pgids(t *testing.T, name string) []int {
	t.Helper()
	var ids []int
	for _, f := range strings.Split(r.vars[name+"_PIDS"], ",") {
		id, err := strconv.Atoi(f)
		if err != nil {
			t.Fatalf("%s_PIDS=%q: %v", name, r.vars[name+"_PIDS"], err)
		}
		ids = append(ids, id)
	}
	return ids
}

// wait waits for the command to exit and checks its status and that no
// process of the servers' groups, and none of their files, is left.
func (r *running) wait(t *testing.T, want int, groups []int) {
	t.Helper()
	_ = r.cmd.Wait()
	if got := r.cmd.ProcessState.ExitCode(); got != want {
		t.Errorf("the command exited with %d, want %d; stderr:\n%s", got, want, r.stderr)
	}
	for _, g := range groups {
		if testserver.GroupAlive(g) {
			t.Errorf("a process of group %d outlived the command", g)
		}
	}
	if left, _ := os.ReadDir(r.tmp); len(left) > 0 {
		t.Errorf("the command left %s in its temporary folder", left[0].Name())
	}
}

// ask sends req to addr and returns the first n bytes of the answer.
func ask(t *testing.T, addr string, req []byte, n int) string {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(30 * time.Second))
	if _, err := c.Write(req); err != nil {
		t.Fatal(err)
	}
	b := make([]byte, n)
	if _, err := io.ReadFull(c, b); err != nil {
		t.Fatalf("%s: %v", addr, err)
	}
	return string(b)
}

// TestRedisAndPostgres starts both, speaks to each at the printed address,
// signals the command, and checks that every server process is gone.
func TestRedisAndPostgres(t *testing.T) {
	r := startCommand(t, "cache=redis", "db=postgres")
	if got := ask(t, r.vars["cache_ADDR"], []byte("PING\r\n"), 7); got != "+PONG\r\n" {
		t.Errorf("redis at cache_ADDR answered PING with %q", got)
	}
	if u := r.vars["cache_URL"]; u != "redis://"+r.vars["cache_ADDR"]+"/0" {
		t.Errorf("cache_URL=%q", u)
	}
	// PostgreSQL's SSLRequest (length 8, code 80877103): a server without
	// TLS answers 'N'.
	if got := ask(t, r.vars["db_ADDR"], []byte{0, 0, 0, 8, 0x04, 0xd2, 0x16, 0x2f}, 1); got != "N" {
		t.Errorf("postgres at db_ADDR answered an SSLRequest with %q", got)
	}
	if u := r.vars["db_URL"]; !strings.HasPrefix(u, "postgres://postgres@"+r.vars["db_ADDR"]+"/") {
		t.Errorf("db_URL=%q", u)
	}
	groups := append(r.pgids(t, "cache"), r.pgids(t, "db")...)
	for _, g := range groups {
		if !testserver.GroupAlive(g) {
			t.Fatalf("no process of group %d runs: the printed pids are not the servers'", g)
		}
	}
	if err := r.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	r.wait(t, 0, groups)
}

// TestStdinCloses: the end of standard input (the script that started it
// ended) stops the servers.
func TestStdinCloses(t *testing.T) {
	r := startCommand(t, "redis")
	groups := r.pgids(t, "redis")
	_ = r.stdin.Close()
	r.wait(t, 0, groups)
}

// TestKilled: a command killed without a chance to stop its servers does
// not leave them running (the kernel's parent-death signal).
func TestKilled(t *testing.T) {
	r := startCommand(t, "redis")
	groups := r.pgids(t, "redis")
	_ = r.cmd.Process.Kill()
	_ = r.cmd.Wait()
	for end := time.Now().Add(time.Minute); testserver.GroupAlive(groups[0]) && time.Now().Before(end); {
		time.Sleep(10 * time.Millisecond)
	}
	if testserver.GroupAlive(groups[0]) {
		t.Errorf("redis (group %d) outlived the killed command by a minute", groups[0])
	}
}

// TestStartFails: a server that cannot start stops those already up and
// ends the command with status 1; with -keep-going it is named and the
// others run.
func TestStartFails(t *testing.T) {
	t.Run("stop", func(t *testing.T) {
		var out, errb bytes.Buffer
		cmd := exec.Command(bin, "redis", "e=etcd:0")
		cmd.Stdout, cmd.Stderr = &out, &errb
		if _, err := cmd.StdinPipe(); err != nil { // held open: the end of input would stop it
			t.Fatal(err)
		}
		err := cmd.Run()
		if cmd.ProcessState.ExitCode() != 1 || !strings.Contains(errb.String(), "e (etcd): etcd: members") {
			t.Fatalf("exit %v; stderr:\n%s", err, errb.String())
		}
		if strings.Contains(out.String(), "READY") {
			t.Errorf("printed READY after a failed start:\n%s", out.String())
		}
		for _, l := range strings.Split(out.String(), "\n") {
			if pid, ok := strings.CutPrefix(l, "redis_PIDS="); ok {
				if g, _ := strconv.Atoi(pid); testserver.GroupAlive(g) {
					t.Errorf("redis (group %d) outlived the failed command", g)
				}
			}
		}
	})
	t.Run("keep-going", func(t *testing.T) {
		r := startCommand(t, "-keep-going", "e=etcd:0", "redis")
		if e := r.vars["e_ERROR"]; !strings.Contains(e, "members") {
			t.Errorf("e_ERROR=%q, want the reason", e)
		}
		groups := r.pgids(t, "redis")
		_ = r.stdin.Close()
		r.wait(t, 0, groups)
	})
}
