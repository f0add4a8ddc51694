package testserver

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"time"
)

// ErrExited means a server process exited while it was starting.
var ErrExited = errors.New("testserver: the server exited at start")

// ErrNotReady means a server's readiness probe did not pass before the
// start deadline.
var ErrNotReady = errors.New("testserver: the server was not ready in time")

// Spec describes a server process. The zero values of the optional fields
// are the documented defaults.
type Spec struct {
	// Name names the process in errors; "" means the binary's base name.
	Name string
	// Path is the binary; Args its arguments.
	Path string
	Args []string
	// Prefix, if set, runs the server as Prefix + Path + Args: e.g.
	// `ip netns exec NAME`, to start it in another network namespace. The
	// prefix must exec the server in the same process (ip netns exec and
	// nsenter do), so that signals, Pause's watch of /proc and the reaping
	// act on the server itself.
	Prefix []string
	// Env is added to the test process's environment.
	Env []string
	// Dir is the working folder; "" means the test process's.
	Dir string
	// Log is the file the process's standard output and error are
	// appended to; "" discards them.
	Log string
	// Logs are more log files, written by the server itself, that errors
	// show.
	Logs []string
	// User runs the process as another user (PostgreSQL refuses root); nil
	// runs it as the test process's user.
	User *syscall.Credential
	// Probe reports whether the server is ready; nil means ready once
	// started. It is called every 20 ms until it returns nil.
	Probe func(ctx context.Context) error
	// StartTimeout bounds the wait for Probe; 0 means 30 s.
	StartTimeout time.Duration
	// StopSignal is what Stop sends first; 0 means SIGTERM.
	StopSignal syscall.Signal
	// StopGrace is how long Stop waits before SIGKILL; 0 means 10 s.
	StopGrace time.Duration
}

// Process is one server process in its own process group. It is reaped
// with wait4 rather than by a goroutine blocked in Wait, so that tests'
// goroutine-leak checks see nothing of it. Its methods are safe for
// concurrent use.
type Process struct {
	spec Spec

	mu   sync.Mutex
	pid  int // the running process; 0 when it was reaped
	pgid int // its group, kept until every member is gone
}

// NewProcess returns a process for spec, not started.
func NewProcess(spec Spec) *Process {
	if spec.Name == "" {
		spec.Name = filepath.Base(spec.Path)
	}
	return &Process{spec: spec}
}

// StartProcess starts spec and waits until its probe passes.
func StartProcess(ctx context.Context, spec Spec) (*Process, error) {
	p := NewProcess(spec)
	if err := p.Start(ctx); err != nil {
		return nil, err
	}
	return p, nil
}

// Name returns the process's name.
func (p *Process) Name() string { return p.spec.Name }

// Start launches the process and waits until its probe passes. On failure
// the process is killed and the error holds the tail of its logs.
func (p *Process) Start(ctx context.Context) error {
	if err := p.Launch(); err != nil {
		return err
	}
	return p.WaitReady(ctx)
}

// Launch starts the process without waiting for it to be ready.
func (p *Process) Launch() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.pid != 0 && !p.exitedLocked() {
		return fmt.Errorf("testserver: %s is already running (pid %d)", p.spec.Name, p.pid)
	}
	// The standard files are *os.File values, handed to the child as they
	// are, so that os/exec starts no copying goroutines.
	devnull, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer devnull.Close()
	out := devnull
	if p.spec.Log != "" {
		f, err := os.OpenFile(p.spec.Log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			return err
		}
		defer f.Close()
		if u := p.spec.User; u != nil {
			_ = f.Chown(int(u.Uid), int(u.Gid))
		}
		out = f
	}
	argv := append(append(append([]string(nil), p.spec.Prefix...), p.spec.Path), p.spec.Args...)
	cmd := exec.Command(argv[0], argv[1:]...)
	if p.spec.Env != nil {
		cmd.Env = append(os.Environ(), p.spec.Env...)
	}
	cmd.Dir = p.spec.Dir
	cmd.Stdin, cmd.Stdout, cmd.Stderr = devnull, out, out
	cmd.SysProcAttr = sysProcAttr(p.spec.User)
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("testserver: start %s: %w", p.spec.Name, err)
	}
	p.pid, p.pgid = cmd.Process.Pid, cmd.Process.Pid
	_ = cmd.Process.Release() // reaped with wait4
	return nil
}

// SetArgs replaces the arguments of the process's next launch (an etcd
// member restarts with --initial-cluster-state existing).
func (p *Process) SetArgs(args []string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.spec.Args = args
}

// probeTimeout bounds one call of a Spec's Probe.
const probeTimeout = 5 * time.Second

// WaitReady calls the probe until it passes, the process exits, or the
// start deadline (or ctx) ends; then the process is killed and the error
// (ErrExited or ErrNotReady) holds the tail of its logs.
func (p *Process) WaitReady(ctx context.Context) error {
	limit := p.spec.StartTimeout
	if limit == 0 {
		limit = 30 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	for {
		var err error
		if p.spec.Probe != nil {
			// Each probe has a few seconds: one that hangs (a ZooKeeper
			// that took the connection while starting and never answered
			// it) must not use up the whole start.
			pctx, pcancel := context.WithTimeout(ctx, probeTimeout)
			err = p.spec.Probe(pctx)
			pcancel()
		}
		if !p.Running() {
			p.Kill()
			return fmt.Errorf("%w: %s: %v; log:\n%s", ErrExited, p.spec.Name, err, p.Log())
		}
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			p.Kill()
			return fmt.Errorf("%w: %s after %s: %v; log:\n%s", ErrNotReady, p.spec.Name, limit, err, p.Log())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// Pid returns the process id, which is also its process group's, or 0
// when it is not running.
func (p *Process) Pid() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.exitedLocked() {
		return 0
	}
	return p.pid
}

// Running reports whether the process runs (a paused one does).
func (p *Process) Running() bool { return p.Pid() != 0 }

// exitedLocked reports, and reaps, a process that has exited. p.mu held.
func (p *Process) exitedLocked() bool {
	if p.pid == 0 {
		return true
	}
	var ws syscall.WaitStatus
	if wpid, err := syscall.Wait4(p.pid, &ws, syscall.WNOHANG, nil); wpid == p.pid || (err != nil && err != syscall.EINTR) {
		p.pid = 0
	}
	return p.pid == 0
}

// reapLocked waits for the process to exit. p.mu held.
func (p *Process) reapLocked() {
	for p.pid != 0 {
		var ws syscall.WaitStatus
		wpid, err := syscall.Wait4(p.pid, &ws, 0, nil)
		if wpid == p.pid || (err != nil && err != syscall.EINTR) {
			p.pid = 0
		}
	}
}

// Signal sends sig to the process's group.
func (p *Process) Signal(sig syscall.Signal) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.exitedLocked() {
		return fmt.Errorf("testserver: %s is not running", p.spec.Name)
	}
	return syscall.Kill(-p.pid, sig)
}

// Pause stops the process group with SIGSTOP: the server holds its
// connections and answers nothing. It returns once every thread of the
// group is stopped (kill(2) returns before a thread busy on another core
// has stopped, and such a thread could still answer), or with an error
// after 5 s.
func (p *Process) Pause() error {
	if err := p.Signal(syscall.SIGSTOP); err != nil {
		return err
	}
	p.mu.Lock()
	pgid := p.pgid
	p.mu.Unlock()
	if _, err := os.Stat("/proc/self/task"); err != nil || pgid == 0 {
		return nil // no /proc to watch: as good as the signal
	}
	for end := time.Now().Add(5 * time.Second); !groupStopped(pgid); {
		if time.Now().After(end) {
			return fmt.Errorf("testserver: %s: a thread of its group still runs 5 s after SIGSTOP", p.spec.Name)
		}
		time.Sleep(time.Millisecond)
	}
	return nil
}

// Resume continues a paused process group (SIGCONT).
func (p *Process) Resume() error { return p.Signal(syscall.SIGCONT) }

// Kill sends SIGKILL to the process group (waking it if paused), waits for
// the process, and then for the rest of its group: a crash.
func (p *Process) Kill() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.pid != 0 {
		sigkill(p.pid)
		p.reapLocked()
	}
	p.cleanGroupLocked(10 * time.Second)
}

// KillAll kills ps at once, as a machine crash would: SIGKILL goes to
// every group before any is waited for (one by one, a slow exit would let
// the others run on).
func KillAll(ps ...*Process) {
	for _, p := range ps {
		if pid := p.Pid(); pid != 0 {
			sigkill(pid)
		}
	}
	for _, p := range ps {
		p.Kill()
	}
}

// Stop sends the spec's stop signal to the process and, after its grace,
// SIGKILL to the group.
func (p *Process) Stop() {
	sig, grace := p.spec.StopSignal, p.spec.StopGrace
	if sig == 0 {
		sig = syscall.SIGTERM
	}
	if grace == 0 {
		grace = 10 * time.Second
	}
	p.Halt(sig, grace)
}

// Halt sends sig to the process (its group leader only, which stops its
// children its own way), waits up to grace for it to exit, then kills the
// group. Whatever is left of the group afterwards is killed too.
func (p *Process) Halt(sig syscall.Signal, grace time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.exitedLocked() {
		_ = syscall.Kill(-p.pid, syscall.SIGCONT)
		_ = syscall.Kill(p.pid, sig)
		for end := time.Now().Add(grace); time.Now().Before(end) && !p.exitedLocked(); {
			time.Sleep(10 * time.Millisecond)
		}
		if p.pid != 0 {
			sigkill(p.pid)
			p.reapLocked()
		}
	}
	p.cleanGroupLocked(grace)
}

// cleanGroupLocked kills what is left of the group. p.mu held.
func (p *Process) cleanGroupLocked(limit time.Duration) {
	if p.pgid != 0 {
		killGroup(p.pgid, limit)
		p.pgid = 0
	}
}

// Restart kills the process and starts it again with the same spec: the
// same port and data folder. A start that fails because the process exited
// (the old one's port may linger a moment) is retried until ctx ends, at
// most 50 times.
func (p *Process) Restart(ctx context.Context) error {
	p.Kill()
	var err error
	for range 50 {
		if err = p.Start(ctx); err == nil || !errors.Is(err, ErrExited) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(100 * time.Millisecond):
		}
	}
	return err
}

// Log returns the tail of the process's logs, for error messages.
func (p *Process) Log() string {
	var out string
	for _, f := range append([]string{p.spec.Log}, p.spec.Logs...) {
		if f != "" {
			out += tailFile(f, 4000)
		}
	}
	return out
}

// tailFile returns the last n bytes of a file, headed by its name.
func tailFile(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Sprintf("--- %s: %v\n", path, err)
	}
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return fmt.Sprintf("--- %s (tail)\n%s\n", path, b)
}
