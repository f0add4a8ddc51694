package faults

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
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
type Redis struct {
	srv *redisServer

	ftLib  string // libfaketime, when it works with this redis-server
	ftFile string
	ftNote string
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
	b.probeFaketime(bin, dir)
	if b.ftLib != "" {
		b.ftFile = filepath.Join(dir, "faketime")
		if err := os.WriteFile(b.ftFile, []byte("+0\n"), 0o644); err != nil {
			return err
		}
		b.srv.env = faketimeEnv(b.ftLib, b.ftFile)
	}
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
func (b *Redis) CanStepClock() (bool, string) { return b.ftLib != "", b.ftNote }

// StepClock implements ClockStepper: it moves the server's wall clock by d
// (relative to the real clock) through libfaketime.
func (b *Redis) StepClock(d time.Duration) error {
	if b.ftLib == "" {
		return errors.New(b.ftNote)
	}
	return os.WriteFile(b.ftFile, []byte(fmt.Sprintf("%+ds\n", int64(d/time.Second))), 0o644)
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

var faketimeProbe struct {
	once sync.Once
	lib  string
	note string
}

// probeFaketime checks once per process whether redis-server runs under
// libfaketime (apt-get install -y faketime). With Debian 12's libfaketime
// 0.9.10 and redis-server 7.0.15 it does not: the server dies at start.
func (b *Redis) probeFaketime(bin, dir string) {
	faketimeProbe.once.Do(func() {
		lib := ""
		for _, l := range faketimeLibs {
			if _, err := os.Stat(l); err == nil {
				lib = l
				break
			}
		}
		if lib == "" {
			faketimeProbe.note = "libfaketime is not installed (apt-get install -y faketime)"
			return
		}
		pdir := filepath.Join(dir, "faketime-probe")
		file := filepath.Join(dir, "faketime-probe.ts")
		if err := os.WriteFile(file, []byte("+0\n"), 0o644); err != nil {
			faketimeProbe.note = err.Error()
			return
		}
		port, err := FreePort()
		if err != nil {
			faketimeProbe.note = err.Error()
			return
		}
		s := &redisServer{bin: bin, dir: pdir, name: "redis-server under faketime", port: port,
			args: []string{"--save", "", "--appendonly", "no"}, env: faketimeEnv(lib, file)}
		if err := s.startWithin(3 * time.Second); err != nil {
			msg := strings.Join(strings.Fields(err.Error()), " ")
			if len(msg) > 300 {
				msg = msg[:300] + "..."
			}
			faketimeProbe.note = "redis-server does not run under libfaketime on this machine: " + msg
			return
		}
		s.kill()
		faketimeProbe.lib = lib
	})
	b.ftLib, b.ftNote = faketimeProbe.lib, faketimeProbe.note
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
