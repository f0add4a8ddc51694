package testserver

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

func TestFindBinMissingNamesScript(t *testing.T) {
	_, err := FindBin("leasehold-no-such-server", "nosuch.sh")
	if !errors.Is(err, ErrNotInstalled) || !strings.Contains(err.Error(), "scripts/install/nosuch.sh") {
		t.Fatalf("FindBin of a missing binary: %v, want ErrNotInstalled naming the script", err)
	}
}

func TestFindBinPrefersBinDir(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "sh")
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("LEASEHOLD_BIN", dir)
	if got, err := FindBin("sh", "x.sh"); err != nil || got != p {
		t.Fatalf("FindBin(sh) = %q, %v; want %q from $LEASEHOLD_BIN", got, err, p)
	}
}

func TestFreePortsDistinct(t *testing.T) {
	ps, err := FreePorts(8)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int]bool{}
	for _, p := range ps {
		if p == 0 || seen[p] {
			t.Fatalf("FreePorts(8) = %v: zero or repeated", ps)
		}
		seen[p] = true
	}
}

// A process that exits at start: ErrExited, with its log in the error.
func TestExitAtStartShowsLog(t *testing.T) {
	log := filepath.Join(t.TempDir(), "out.log")
	_, err := StartProcess(context.Background(), Spec{
		Path: "/bin/sh", Args: []string{"-c", "echo boom-from-the-server; exit 3"}, Log: log,
		Probe: func(context.Context) error { return errors.New("not yet") },
	})
	if !errors.Is(err, ErrExited) || !strings.Contains(err.Error(), "boom-from-the-server") {
		t.Fatalf("start of a process that exits: %v, want ErrExited with its log", err)
	}
}

// Stop sends the stop signal first: a shell that traps it exits cleanly;
// Kill ends a paused process and the children of its group.
func TestStopKillPause(t *testing.T) {
	dir := t.TempDir()
	mark, ready := filepath.Join(dir, "trapped"), filepath.Join(dir, "ready")
	p, err := StartProcess(context.Background(), Spec{
		Path: "/bin/sh", Args: []string{"-c", "trap 'touch " + mark + "; exit 0' TERM; touch " + ready + "; while :; do sleep 0.05; done"},
		Probe: func(context.Context) error { _, err := os.Stat(ready); return err },
	})
	if err != nil {
		t.Fatal(err)
	}
	pid := p.Pid()
	p.Stop()
	if p.Running() {
		t.Fatal("running after Stop")
	}
	if _, err := os.Stat(mark); err != nil {
		t.Fatalf("Stop did not send SIGTERM first: %v", err)
	}
	if err := syscall.Kill(-pid, 0); err == nil {
		t.Fatal("the process group outlived Stop")
	}

	p, err = StartProcess(context.Background(), Spec{Path: "/bin/sh", Args: []string{"-c", "sleep 600 & sleep 600"}})
	if err != nil {
		t.Fatal(err)
	}
	pid = p.Pid()
	if err := p.Pause(); err != nil {
		t.Fatal(err)
	}
	p.Kill()
	if p.Running() || GroupAlive(pid) {
		t.Fatal("the paused group outlived Kill")
	}
	if err := p.Resume(); err == nil {
		t.Fatal("Resume of a killed process succeeded")
	}
}

// TestPauseWaitsForStop pauses a group whose members spin on both cores:
// Pause returns only when every thread is stopped, for a server that
// answered in the moment after kill(2) would fail the fault it stands for.
func TestPauseWaitsForStop(t *testing.T) {
	p, err := StartProcess(context.Background(), Spec{Path: "/bin/sh", Args: []string{"-c", "yes >/dev/null & yes >/dev/null & wait"}})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Kill()
	for i := 0; i < 20; i++ {
		if err := p.Pause(); err != nil {
			t.Fatal(err)
		}
		if !groupStopped(p.Pid()) {
			t.Fatalf("pause %d: Pause returned while a thread of the group ran", i)
		}
		if err := p.Resume(); err != nil {
			t.Fatal(err)
		}
	}
}

func TestKillAll(t *testing.T) {
	var ps []*Process
	for range 3 {
		p, err := StartProcess(context.Background(), Spec{Path: "/bin/sh", Args: []string{"-c", "sleep 600"}})
		if err != nil {
			t.Fatal(err)
		}
		ps = append(ps, p)
	}
	KillAll(ps...)
	for _, p := range ps {
		if p.Running() {
			t.Fatal("running after KillAll")
		}
	}
}

// A Spec's Prefix runs before the binary, and the process Pid, Pause and
// Kill act on is the server's own (the prefix execs it).
func TestPrefixExecsServer(t *testing.T) {
	dir := t.TempDir()
	ready := filepath.Join(dir, "ready")
	p, err := StartProcess(context.Background(), Spec{
		Prefix: []string{"/usr/bin/env", "LEASEHOLD_PREFIX_MARK=1"},
		Path:   "/bin/sh", Args: []string{"-c", "touch " + ready + "; while :; do sleep 0.05; done"},
		Probe: func(context.Context) error { _, err := os.Stat(ready); return err },
	})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Kill()
	env, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(p.Pid()), "environ"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(env), "LEASEHOLD_PREFIX_MARK=1") {
		t.Fatal("the prefix did not run: its variable is not in the server's environment")
	}
	exe, err := os.Readlink(filepath.Join("/proc", strconv.Itoa(p.Pid()), "exe"))
	if err != nil || !strings.HasSuffix(exe, "sh") {
		t.Fatalf("the process Pid names is %q (%v), not the server (a shell)", exe, err)
	}
	if err := p.Pause(); err != nil {
		t.Fatal(err)
	}
	if err := p.Resume(); err != nil {
		t.Fatal(err)
	}
	p.Kill()
	if p.Running() {
		t.Fatal("running after Kill")
	}
}
