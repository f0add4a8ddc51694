package harness

import (
	"context"
	_ "embed"
	"encoding/binary"
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

// redisServer is one redis-server process on a fixed port.
type redisServer struct {
	bin, dir, name string
	port           int
	args           []string
	env            []string
	proc           *Proc
}

func (s *redisServer) addr() string { return "127.0.0.1:" + strconv.Itoa(s.port) }

func (s *redisServer) start() error { return s.startWithin(15 * time.Second) }

func (s *redisServer) startWithin(timeout time.Duration) error {
	if err := os.MkdirAll(s.dir, 0o755); err != nil {
		return err
	}
	log := filepath.Join(s.dir, "redis.log")
	argv := append([]string{s.bin, "--bind", "127.0.0.1", "--port", strconv.Itoa(s.port), "--dir", s.dir,
		"--daemonize", "no", "--logfile", log}, s.args...)
	p, err := StartProc(ProcSpec{Name: s.name, Argv: argv, Env: s.env, Log: filepath.Join(s.dir, "stdout.log")})
	if err != nil {
		return err
	}
	s.proc = p
	deadline := time.Now().Add(timeout)
	for {
		if redisPing(s.addr()) == nil {
			return nil
		}
		if p.Exited() {
			return fmt.Errorf("%s exited at start: %s %s", s.name, tail(log), tail(filepath.Join(s.dir, "stdout.log")))
		}
		if time.Now().After(deadline) {
			p.Kill()
			return fmt.Errorf("%s not ready on %s after %s: %s %s", s.name, s.addr(), timeout, tail(log), tail(filepath.Join(s.dir, "stdout.log")))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (s *redisServer) kill() {
	if s.proc != nil {
		s.proc.Kill()
	}
}

// wipe deletes the server's data files.
func (s *redisServer) wipe() error {
	ents, err := os.ReadDir(s.dir)
	if err != nil {
		return err
	}
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".log") {
			continue
		}
		if err := os.RemoveAll(filepath.Join(s.dir, e.Name())); err != nil {
			return err
		}
	}
	return nil
}

// redisPing sends PING and expects +PONG.
func redisPing(addr string) error {
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(time.Second))
	if _, err := c.Write([]byte("*1\r\n$4\r\nPING\r\n")); err != nil {
		return err
	}
	b := make([]byte, 64)
	n, err := c.Read(b)
	if err != nil {
		return err
	}
	if !strings.HasPrefix(string(b[:n]), "+PONG") {
		return fmt.Errorf("redis answered %q", b[:n])
	}
	return nil
}

func redisBin() (string, error) { return FindBin("redis-server", "redis.sh") }

// Redis is one redis-server with an append-only file fsynced on every
// write (--appendonly yes --appendfsync always), so that F9 (kill and
// restart) keeps the data and F9b (restart without its data) loses it: the
// case of Redis without persistence.
//
// Its clock step (F11) uses Debian's libfaketime if redis-server runs under
// it, and otherwise a small LD_PRELOAD library the harness compiles with
// cc (clockshift.c.txt): it shifts CLOCK_REALTIME, gettimeofday and time by
// an offset read from a shared file, and never calls malloc (libfaketime's
// initialisation recurses through jemalloc in Debian's redis-server).
type Redis struct {
	srv *redisServer

	clock     string // "faketime", "clockshift" or ""
	clockFile string
	clockNote string
	shift     time.Duration
}

// Name implements Backend.
func (b *Redis) Name() string { return "redis" }

// Start implements Backend.
func (b *Redis) Start(ctx context.Context, dir string) error {
	bin, err := redisBin()
	if err != nil {
		return err
	}
	port, err := FreePort()
	if err != nil {
		return err
	}
	b.srv = &redisServer{bin: bin, dir: filepath.Join(dir, "redis"), name: "redis-server", port: port,
		args: []string{"--save", "", "--appendonly", "yes", "--appendfsync", "always"}}
	b.shift = 0
	env, err := b.setupClock(bin, dir)
	if err != nil {
		return err
	}
	b.srv.env = env
	return b.srv.start()
}

// Endpoints implements Backend.
func (b *Redis) Endpoints() []string { return []string{b.srv.addr()} }

// URL implements Backend.
func (b *Redis) URL(eps []string) string { return "redis://" + eps[0] + "/0" }

// Close implements Backend.
func (b *Redis) Close() error {
	if b.srv != nil {
		b.srv.kill()
	}
	return nil
}

// PauseStore implements StorePauser.
func (b *Redis) PauseStore() error { return b.srv.proc.Signal(syscall.SIGSTOP) }

// ResumeStore implements StorePauser.
func (b *Redis) ResumeStore() error { return b.srv.proc.Signal(syscall.SIGCONT) }

// KillStore implements StoreRestarter.
func (b *Redis) KillStore() error { b.srv.kill(); return nil }

// RestartStore implements StoreRestarter.
func (b *Redis) RestartStore(_ context.Context, wipe bool) error {
	if wipe {
		if err := b.srv.wipe(); err != nil {
			return err
		}
	}
	return b.srv.start()
}

// WipeMeaningful implements Wiper: losing Redis's data is the case of
// Redis without persistence.
func (b *Redis) WipeMeaningful() bool { return true }

// CanStepClock implements ClockStepper.
func (b *Redis) CanStepClock() (bool, string) { return b.clock != "", b.clockNote }

// StepClock implements ClockStepper: it moves the server's wall clock by d
// more (the steps add up; the harness only steps forward).
func (b *Redis) StepClock(d time.Duration) error {
	b.shift += d
	switch b.clock {
	case "faketime":
		return os.WriteFile(b.clockFile, []byte(fmt.Sprintf("%+ds\n", int64(b.shift/time.Second))), 0o644)
	case "clockshift":
		return writeShift(b.clockFile, b.shift)
	}
	return errors.New(b.clockNote)
}

// faketimeLibs are where Debian's faketime package puts libfaketime.
var faketimeLibs = []string{
	"/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1",
	"/usr/lib/aarch64-linux-gnu/faketime/libfaketime.so.1",
	"/usr/lib/faketime/libfaketime.so.1",
}

func faketimeEnv(lib, file string) []string {
	return []string{"LD_PRELOAD=" + lib, "FAKETIME_TIMESTAMP_FILE=" + file, "FAKETIME_NO_CACHE=1", "FAKETIME_DONT_FAKE_MONOTONIC=1"}
}

//go:embed clockshift.c.txt
var clockshiftC string

// writeShift stores d (nanoseconds, little-endian int64) where the
// clockshift library reads it.
func writeShift(path string, d time.Duration) error {
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], uint64(int64(d)))
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = f.WriteAt(b[:], 0)
	return err
}

// clockProbe remembers, per process, how (and whether) redis-server's
// clock can be stepped here.
var clockProbe struct {
	once sync.Once
	mode string // "faketime", "clockshift" or ""
	lib  string
	note string
	dir  string
}

// setupClock finds a way to step the server's clock and returns the
// environment that installs it: libfaketime if redis-server runs under it,
// else the clockshift library. It tries once per process, starting a
// throwaway server under each.
func (b *Redis) setupClock(bin, dir string) ([]string, error) {
	clockProbe.once.Do(func() { probeClock(bin) })
	b.clock = clockProbe.mode
	b.clockNote = clockProbe.note
	switch b.clock {
	case "faketime":
		b.clockFile = filepath.Join(dir, "faketime")
		return faketimeEnv(clockProbe.lib, b.clockFile), os.WriteFile(b.clockFile, []byte("+0\n"), 0o644)
	case "clockshift":
		b.clockFile = filepath.Join(dir, "clockshift")
		return []string{"LD_PRELOAD=" + clockProbe.lib, "CLOCKSHIFT_FILE=" + b.clockFile}, writeShift(b.clockFile, 0)
	}
	return nil, nil
}

func probeClock(bin string) {
	d, err := os.MkdirTemp("", "leasehold-faults-clock-")
	if err != nil {
		clockProbe.note = err.Error()
		return
	}
	_ = os.Chmod(d, 0o755)
	clockProbe.dir = d // kept for the process's life: the library lives here
	try := func(name string, env []string) error {
		port, err := FreePort()
		if err != nil {
			return err
		}
		s := &redisServer{bin: bin, dir: filepath.Join(d, name), name: "redis-server under " + name, port: port,
			args: []string{"--save", "", "--appendonly", "no"}, env: env}
		if err := s.startWithin(3 * time.Second); err != nil {
			msg := strings.Join(strings.Fields(err.Error()), " ")
			if len(msg) > 240 {
				msg = msg[:240] + "..."
			}
			return errors.New(msg)
		}
		s.kill()
		return nil
	}
	var notes []string
	for _, lib := range faketimeLibs {
		if _, err := os.Stat(lib); err != nil {
			continue
		}
		f := filepath.Join(d, "faketime.ts")
		_ = os.WriteFile(f, []byte("+0\n"), 0o644)
		if err := try("faketime", faketimeEnv(lib, f)); err != nil {
			notes = append(notes, "redis-server does not run under libfaketime here ("+err.Error()+")")
			break
		}
		clockProbe.mode, clockProbe.lib = "faketime", lib
		clockProbe.note = "F11 steps the Redis server's clock with libfaketime"
		return
	}
	if len(notes) == 0 {
		notes = append(notes, "libfaketime is not installed (apt-get install -y faketime)")
	}
	cc, err := exec.LookPath("cc")
	if err != nil {
		clockProbe.note = strings.Join(append(notes, "and no C compiler (cc) to build the clockshift library"), "; ")
		return
	}
	src, lib := filepath.Join(d, "clockshift.c"), filepath.Join(d, "clockshift.so")
	if err := os.WriteFile(src, []byte(clockshiftC), 0o644); err != nil {
		clockProbe.note = err.Error()
		return
	}
	if out, err := exec.Command(cc, "-shared", "-fPIC", "-O2", "-o", lib, src).CombinedOutput(); err != nil {
		clockProbe.note = strings.Join(append(notes, "and building the clockshift library failed: "+string(out)), "; ")
		return
	}
	f := filepath.Join(d, "clockshift.off")
	if err := writeShift(f, 0); err != nil {
		clockProbe.note = err.Error()
		return
	}
	if err := try("clockshift", []string{"LD_PRELOAD=" + lib, "CLOCKSHIFT_FILE=" + f}); err != nil {
		clockProbe.note = strings.Join(append(notes, "and redis-server does not run under the clockshift library: "+err.Error()), "; ")
		return
	}
	clockProbe.mode, clockProbe.lib = "clockshift", lib
	clockProbe.note = strings.Join(notes, "; ") + "; F11 steps the Redis server's clock with the harness's clockshift library instead"
}

// CleanupClockProbe removes the files of the clock probe (call at exit).
func CleanupClockProbe() {
	if clockProbe.dir != "" {
		_ = os.RemoveAll(clockProbe.dir)
	}
}

// Redlock is three redis-server masters without persistence (the common
// deployment, and the one Redlock's analysis is about). Its store kill (F9)
// restarts one master empty; its store pause (F8) stops all of them.
type Redlock struct {
	srvs []*redisServer
	next int
}

// Name implements Backend.
func (b *Redlock) Name() string { return "redlock" }

// Start implements Backend.
func (b *Redlock) Start(ctx context.Context, dir string) error {
	bin, err := redisBin()
	if err != nil {
		return err
	}
	b.srvs, b.next = nil, 0
	for i := 0; i < 3; i++ {
		port, err := FreePort()
		if err != nil {
			return err
		}
		s := &redisServer{bin: bin, dir: filepath.Join(dir, fmt.Sprintf("redis%d", i)), name: fmt.Sprintf("redis-server-%d", i),
			port: port, args: []string{"--save", "", "--appendonly", "no"}}
		if err := s.start(); err != nil {
			b.Close()
			return err
		}
		b.srvs = append(b.srvs, s)
	}
	return nil
}

// Endpoints implements Backend.
func (b *Redlock) Endpoints() []string {
	var out []string
	for _, s := range b.srvs {
		out = append(out, s.addr())
	}
	return out
}

// URL implements Backend.
func (b *Redlock) URL(eps []string) string { return "redlock://" + strings.Join(eps, ",") + "/0" }

// Close implements Backend.
func (b *Redlock) Close() error {
	for _, s := range b.srvs {
		s.kill()
	}
	return nil
}

// PauseStore implements StorePauser.
func (b *Redlock) PauseStore() error {
	var errs []error
	for _, s := range b.srvs {
		errs = append(errs, s.proc.Signal(syscall.SIGSTOP))
	}
	return errors.Join(errs...)
}

// ResumeStore implements StorePauser.
func (b *Redlock) ResumeStore() error {
	var errs []error
	for _, s := range b.srvs {
		errs = append(errs, s.proc.Signal(syscall.SIGCONT))
	}
	return errors.Join(errs...)
}

// KillStore implements StoreRestarter: it kills one master, in turn.
func (b *Redlock) KillStore() error {
	b.srvs[b.next].kill()
	return nil
}

// RestartStore implements StoreRestarter: the killed master comes back
// empty (no persistence).
func (b *Redlock) RestartStore(_ context.Context, _ bool) error {
	s := b.srvs[b.next]
	b.next = (b.next + 1) % len(b.srvs)
	if err := s.wipe(); err != nil {
		return err
	}
	return s.start()
}

// KillMaster implements MajorityStore.
func (b *Redlock) KillMaster(i int) { b.srvs[i].kill() }

// RestartMaster implements MajorityStore: the master comes back empty.
func (b *Redlock) RestartMaster(_ context.Context, i int) error {
	if err := b.srvs[i].wipe(); err != nil {
		return err
	}
	return b.srvs[i].start()
}

// WipeMeaningful implements Wiper: F9 already restarts a master empty.
func (b *Redlock) WipeMeaningful() bool { return false }

// WipeNote says why F9b is not a separate fault here.
func (b *Redlock) WipeNote() string {
	return "the masters run without persistence, so F9 already restarts a master without its data"
}
