package sqlite

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// childEnv selects a child-process mode: the test binary re-executes itself
// to get real separate processes contending on one file.
const childEnv = "LEASEHOLD_SQLITE_CHILD"

func TestMain(m *testing.M) {
	if mode := os.Getenv(childEnv); mode != "" {
		os.Exit(runChild(mode))
	}
	goleak.VerifyTestMain(m)
}

// openT opens the store at path, closed when t ends.
func openT(t testing.TB, path string, opts *Options) *Store {
	t.Helper()
	s, err := Open(context.Background(), path, opts)
	if err != nil {
		t.Fatalf("Open(%s): %v", path, err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// ctxT returns a context that ends with the test (or after a minute).
func ctxT(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// child is a running child process of the test binary.
type child struct {
	cmd    *exec.Cmd
	stderr *syncBuffer // stdout and stderr
	done   chan error
}

// startChild runs the test binary in mode with env, in its own process group,
// killed (with its group) when t ends if still running.
func startChild(t testing.TB, bin, mode string, env map[string]string, cred *syscall.Credential) *child {
	t.Helper()
	if bin == "" {
		var err error
		if bin, err = os.Executable(); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(bin, "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"="+mode)
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	c := &child{cmd: cmd, stderr: &syncBuffer{}, done: make(chan error, 1)}
	cmd.Stdout = c.stderr
	cmd.Stderr = c.stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Credential: cred}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start child %s: %v", mode, err)
	}
	go func() { c.done <- cmd.Wait() }()
	t.Cleanup(func() {
		select {
		case <-c.done:
		default:
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-c.done
		}
	})
	return c
}

// wait waits for the child to exit, failing t if it does not exit cleanly
// within limit.
func (c *child) wait(t testing.TB, limit time.Duration) {
	t.Helper()
	select {
	case err := <-c.done:
		c.done <- err // for the cleanup
		if err != nil {
			t.Fatalf("child %v: %v\n%s", c.cmd.Env[len(os.Environ())], err, c.stderr)
		}
	case <-time.After(limit):
		syscall.Kill(-c.cmd.Process.Pid, syscall.SIGKILL)
		t.Fatalf("child still running after %s; killed\n%s", limit, c.stderr)
	}
}

// kill SIGKILLs the child's process group and waits for it.
func (c *child) kill() {
	syscall.Kill(-c.cmd.Process.Pid, syscall.SIGKILL)
	err := <-c.done
	c.done <- err
}

// readLog reads a log written by children: one record per line, fields
// separated by spaces. A torn last line (a child killed mid-write) is
// dropped.
func readLog(t testing.TB, path string) [][]string {
	t.Helper()
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out [][]string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasSuffix(line, " .") {
			continue // torn
		}
		out = append(out, strings.Fields(strings.TrimSuffix(line, " .")))
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func countLines(path string) int {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	return strings.Count(string(b), "\n")
}

// appendLog appends one record (terminated by " .") to the log at path with
// a single O_APPEND write, which is atomic against other appenders.
func appendLog(path string, fields ...any) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(f, append(fields, ".")...)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil {
		return v
	}
	return def
}

func tempDB(t testing.TB) string {
	return filepath.Join(t.TempDir(), "leases.db")
}

// syncBuffer is a buffer that a child's output copier writes while the test
// reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}
