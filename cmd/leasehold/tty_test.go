package main

import (
	"bytes"
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

	"golang.org/x/sys/unix"
)

// A terminal for leasehold: the test holds the master side.
type pty struct {
	master, slave *os.File
	mu            sync.Mutex
	out           bytes.Buffer
	done          chan struct{}
}

func openPTY(t *testing.T) *pty {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatalf("open /dev/ptmx: %v", err)
	}
	if err := unix.IoctlSetPointerInt(int(m.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Fatalf("unlockpt: %v", err)
	}
	n, err := unix.IoctlGetUint32(int(m.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatalf("ptsname: %v", err)
	}
	s, err := os.OpenFile("/dev/pts/"+strconv.Itoa(int(n)), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatalf("open pts: %v", err)
	}
	p := &pty{master: m, slave: s, done: make(chan struct{})}
	go func() {
		defer close(p.done)
		buf := make([]byte, 4096)
		for {
			n, err := m.Read(buf)
			p.mu.Lock()
			p.out.Write(buf[:n])
			p.mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	t.Cleanup(func() {
		s.Close()
		m.Close()
		<-p.done
	})
	return p
}

func (p *pty) output() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.out.String()
}

// startOnTTY starts leasehold as the leader of a new session whose
// controlling terminal is p, as a shell would in a terminal.
func (e *env) startOnTTY(p *pty, args ...string) *proc {
	e.t.Helper()
	pr := &proc{done: make(chan struct{})}
	pr.cmd = exec.Command(binary, args...)
	pr.cmd.Env = e.environ()
	pr.cmd.Dir = e.dir
	pr.cmd.Stdin, pr.cmd.Stdout, pr.cmd.Stderr = p.slave, p.slave, p.slave
	pr.cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	if err := pr.cmd.Start(); err != nil {
		e.t.Fatalf("start leasehold: %v", err)
	}
	pid := pr.cmd.Process.Pid
	go func() {
		defer close(pr.done)
		pr.cmd.Wait()
		pr.code = pr.cmd.ProcessState.ExitCode()
	}()
	e.t.Cleanup(func() {
		syscall.Kill(pid, syscall.SIGCONT)
		syscall.Kill(-pid, syscall.SIGKILL)
		<-pr.done
	})
	return pr
}

// procState is the state letter of a process (R, S, T, Z, ...).
func procState(pid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return ""
	}
	s := string(b)
	if i := strings.LastIndexByte(s, ')'); i >= 0 && i+2 < len(s) {
		return s[i+2 : i+3]
	}
	return ""
}

// readyPID waits for a command to write its pid to path.
func readyPID(t *testing.T, path string) int {
	t.Helper()
	var pid int
	waitFor(t, 10*time.Second, "the command to start", func() bool {
		l := readLines(t, path)
		if len(l) == 0 {
			return false
		}
		pid, _ = strconv.Atoi(l[0])
		return pid > 0
	})
	return pid
}

// In a terminal, the command runs in the foreground: it reads the terminal,
// and Ctrl-C reaches it.
func TestRunInTerminalForeground(t *testing.T) {
	e := newEnv(t)
	p := openPTY(t)
	ready, got := filepath.Join(e.dir, "ready"), filepath.Join(e.dir, "got")
	script := fmt.Sprintf(`echo $$ > %q; read x; echo "$x" > %q; trap 'exit 7' INT; while :; do sleep 0.05; done`, ready, got)
	lh := e.startOnTTY(p, "run", "--key", "tty", "--", "sh", "-c", script)
	readyPID(t, ready)
	p.master.Write([]byte("hello\n"))
	waitFor(t, 10*time.Second, "the command to read the terminal", func() bool { return len(readLines(t, got)) > 0 })
	if l := readLines(t, got); l[0] != "hello" {
		t.Fatalf("the command read %q from the terminal", l)
	}
	time.Sleep(100 * time.Millisecond) // let the trap be set; the test holds either way
	p.master.Write([]byte{0x03})       // Ctrl-C
	if code := lh.wait(t, 20*time.Second); code != 7 {
		t.Fatalf("run exited %d after Ctrl-C, want the command's 7; terminal:\n%s", code, p.output())
	}
	e.checkFree(t, "tty")
}

// Ctrl-Z stops the command and leasehold (the shell sees its job stopped);
// continuing leasehold continues the command in the foreground.
func TestRunInTerminalSuspend(t *testing.T) {
	e := newEnv(t)
	p := openPTY(t)
	ready, got := filepath.Join(e.dir, "ready"), filepath.Join(e.dir, "got")
	script := fmt.Sprintf(`echo $$ > %q; read x; echo "$x" > %q`, ready, got)
	lh := e.startOnTTY(p, "run", "--key", "tty", "--ttl", "1m", "--", "sh", "-c", script)
	pid := readyPID(t, ready)
	p.master.Write([]byte{0x1a}) // Ctrl-Z
	deadline := time.Now().Add(10 * time.Second)
	for procState(pid) != "T" || procState(lh.cmd.Process.Pid) != "T" {
		if time.Now().After(deadline) {
			t.Fatalf("the command (state %s) and leasehold (state %s) did not both stop; terminal:\n%s", procState(pid), procState(lh.cmd.Process.Pid), p.output())
		}
		time.Sleep(10 * time.Millisecond)
	}
	syscall.Kill(lh.cmd.Process.Pid, syscall.SIGCONT) // what the shell's fg does
	waitFor(t, 10*time.Second, "the command to continue", func() bool { return procState(pid) != "T" })
	p.master.Write([]byte("again\n"))
	if code := lh.wait(t, 20*time.Second); code != 0 {
		t.Fatalf("run exited %d; terminal:\n%s", code, p.output())
	}
	if l := readLines(t, got); len(l) != 1 || l[0] != "again" {
		t.Fatalf("the command read %q after being continued; terminal:\n%s", l, p.output())
	}
}
