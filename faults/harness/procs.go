package harness

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Proc is a child process in its own process group, so that a signal
// reaches it and everything it started. The harness kills every Proc it
// started before it returns, and each child also gets SIGKILL if the
// harness dies (Pdeathsig).
type Proc struct {
	Name string
	cmd  *exec.Cmd
	done chan struct{}
	err  error
	log  *os.File
}

// ProcSpec describes a process to start.
type ProcSpec struct {
	Name string
	Argv []string
	Env  []string // added to the harness's environment
	Dir  string
	Log  string // file for stdout and stderr ("" discards them)
	// Cred runs the process as another user (PostgreSQL refuses root).
	Cred *syscall.Credential
}

// StartProc starts spec.
func StartProc(spec ProcSpec) (*Proc, error) {
	cmd := exec.Command(spec.Argv[0], spec.Argv[1:]...)
	cmd.Env = append(os.Environ(), spec.Env...)
	cmd.Dir = spec.Dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL, Credential: spec.Cred}
	p := &Proc{Name: spec.Name, cmd: cmd, done: make(chan struct{})}
	if spec.Log != "" {
		f, err := os.OpenFile(spec.Log, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
		if err != nil {
			return nil, err
		}
		if spec.Cred != nil {
			_ = f.Chown(int(spec.Cred.Uid), int(spec.Cred.Gid))
		}
		cmd.Stdout, cmd.Stderr, p.log = f, f, f
	}
	if err := cmd.Start(); err != nil {
		if p.log != nil {
			p.log.Close()
		}
		return nil, fmt.Errorf("start %s (%s): %w", spec.Name, spec.Argv[0], err)
	}
	go func() {
		p.err = cmd.Wait()
		if p.log != nil {
			p.log.Close()
		}
		close(p.done)
	}()
	return p, nil
}

// Pid returns the process id (also its process group id).
func (p *Proc) Pid() int { return p.cmd.Process.Pid }

// Done is closed when the process has exited.
func (p *Proc) Done() <-chan struct{} { return p.done }

// Exited reports whether the process has exited.
func (p *Proc) Exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// Signal sends sig to the process group.
func (p *Proc) Signal(sig syscall.Signal) error {
	if p.Exited() {
		return fmt.Errorf("%s has exited", p.Name)
	}
	return syscall.Kill(-p.Pid(), sig)
}

// Kill sends SIGKILL to the group (resuming it first if stopped), waits
// for the process to exit, and then for the rest of its group.
func (p *Proc) Kill() {
	if !p.Exited() {
		sigkill(p.Pid())
		<-p.done
	}
	killGroup(p.Pid(), 10*time.Second)
}

// KillProcs kills ps at once, as a machine crash would: SIGKILL goes to
// every group before Kill waits for any of them (one by one, a slow exit
// would let the others run on for seconds).
func KillProcs(ps ...*Proc) {
	for _, p := range ps {
		if !p.Exited() {
			sigkill(p.Pid())
		}
	}
	for _, p := range ps {
		p.Kill()
	}
}

// killGroup SIGKILLs process group pgid until none of its members is alive
// (zombies aside), for up to limit. One signal to a group can miss a child
// forked while it was delivered (a PostgreSQL backend starting as the
// postmaster is killed): such a child outlives the kill and holds the
// store's shared memory, so that a restart fails.
func killGroup(pgid int, limit time.Duration) {
	end := time.Now().Add(limit)
	for groupAlive(pgid) && time.Now().Before(end) {
		sigkill(pgid)
		time.Sleep(10 * time.Millisecond)
	}
}

// sigkill sends SIGKILL to process group pgid, and SIGCONT so that a
// stopped member is woken to die.
func sigkill(pgid int) {
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
	_ = syscall.Kill(-pgid, syscall.SIGCONT)
}

// groupAlive reports whether a process of group pgid is alive and not a
// zombie, as /proc shows it.
func groupAlive(pgid int) bool {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return false
	}
	want := strconv.Itoa(pgid)
	for _, e := range ents {
		if e.Name()[0] < '0' || e.Name()[0] > '9' {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue // exited meanwhile
		}
		// pid (comm) state ppid pgrp ...; comm may hold spaces and ')'.
		i := bytes.LastIndexByte(b, ')')
		if i < 0 || i+2 > len(b) {
			continue
		}
		f := strings.Fields(string(b[i+2:]))
		if len(f) >= 3 && f[2] == want && f[0] != "Z" && f[0] != "X" {
			return true
		}
	}
	return false
}

// Stop sends sig (SIGTERM or SIGINT), waits up to grace, then kills.
func (p *Proc) Stop(sig syscall.Signal, grace time.Duration) {
	if p.Exited() {
		return
	}
	_ = syscall.Kill(-p.Pid(), syscall.SIGCONT)
	_ = syscall.Kill(-p.Pid(), sig)
	select {
	case <-p.done:
		// Anything left in the group.
		killGroup(p.Pid(), grace)
	case <-time.After(grace):
		p.Kill()
	}
}

// Procs is a set of processes to clean up together.
type Procs struct {
	mu sync.Mutex
	ps []*Proc
}

// Add remembers p for KillAll.
func (s *Procs) Add(p *Proc) *Proc {
	s.mu.Lock()
	s.ps = append(s.ps, p)
	s.mu.Unlock()
	return p
}

// KillAll kills every process added.
func (s *Procs) KillAll() {
	s.mu.Lock()
	ps := s.ps
	s.ps = nil
	s.mu.Unlock()
	KillProcs(ps...)
}

// FreePort returns a free loopback TCP port.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// BinDir is where the install scripts put binaries they build:
// $LEASEHOLD_BIN, default ~/.cache/leasehold/bin.
func BinDir() string {
	if d := os.Getenv("LEASEHOLD_BIN"); d != "" {
		return d
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return ""
	}
	return filepath.Join(home, ".cache", "leasehold", "bin")
}

// FindBin finds a server binary in BinDir, then on PATH, then in extra
// directories (glob patterns). The error names the install script.
func FindBin(name, script string, extra ...string) (string, error) {
	if d := BinDir(); d != "" {
		p := filepath.Join(d, name)
		if st, err := os.Stat(p); err == nil && !st.IsDir() {
			return p, nil
		}
	}
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	for _, pat := range extra {
		ms, _ := filepath.Glob(filepath.Join(pat, name))
		if len(ms) > 0 {
			return ms[len(ms)-1], nil
		}
	}
	return "", fmt.Errorf("%s not found in %s, on PATH or in %v: run scripts/install/%s", name, BinDir(), extra, script)
}

// waitTCP waits until addr accepts connections, the process exits, or
// timeout passes.
func waitTCP(addr string, p *Proc, timeout time.Duration, logPath string) error {
	deadline := time.Now().Add(timeout)
	for {
		c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
		if err == nil {
			c.Close()
			return nil
		}
		if p != nil && p.Exited() {
			return fmt.Errorf("%s exited at start: %s", p.Name, tail(logPath))
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s not ready on %s after %s: %s", p.Name, addr, timeout, tail(logPath))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// tail returns the end of a log file for an error message.
func tail(path string) string {
	if path == "" {
		return ""
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	if len(b) > 600 {
		b = b[len(b)-600:]
	}
	return string(b)
}

var errNoServer = errors.New("faults: this store has no server process")

func itoa(i int) string { return strconv.Itoa(i) }
