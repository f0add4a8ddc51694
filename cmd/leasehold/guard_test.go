package main

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	_ "modernc.org/sqlite"

	"github.com/leasehold-go/leasehold/internal/testserver"
)

// groupScript is a command whose process group outlives a plain SIGTERM:
// the leader and a grandchild it forks both ignore SIGTERM and append
// "child PID" and "grandchild PID" lines to log until killed. The leader
// first logs "pids LEADER GRANDCHILD".
func groupScript(log string) []string {
	return []string{"sh", "-c", fmt.Sprintf(`trap '' TERM
(trap '' TERM; while :; do echo "grandchild $(sh -c 'echo $PPID')" >> %[1]q; sleep 0.02; done) &
echo "pids $$ $!" >> %[1]q
while :; do echo "child $$" >> %[1]q; sleep 0.02; done`, log)}
}

// nextHolder is the command of the holder that takes the key next: it logs
// "grant TOKEN" first thing, then gives the first group's writes, if any
// survived, time to show.
func nextHolder(log string) []string {
	return []string{"sh", "-c", fmt.Sprintf(`echo "grant $LEASEHOLD_TOKEN" >> %q; sleep 0.5`, log)}
}

// groupPids waits for the "pids" line of groupScript and returns the
// leader's and the grandchild's pids.
func groupPids(t *testing.T, log string) (int, int) {
	t.Helper()
	var leader, grandchild int
	waitFor(t, 10*time.Second, "the command and its grandchild to start", func() bool {
		for _, l := range readLines(t, log) {
			if _, err := fmt.Sscanf(l, "pids %d %d", &leader, &grandchild); err == nil {
				return true
			}
		}
		return false
	})
	return leader, grandchild
}

// checkNoWriteAfterGrant fails the test if the log has a line of the first
// group after the next holder's "grant" line, or no grant at all. Appends
// to one file are ordered, so the check needs no clock.
func checkNoWriteAfterGrant(t *testing.T, log string) {
	t.Helper()
	lines := readLines(t, log)
	granted := -1
	for i, l := range lines {
		switch {
		case strings.HasPrefix(l, "grant "):
			granted = i
		case granted >= 0 && (strings.HasPrefix(l, "child ") || strings.HasPrefix(l, "grandchild ")):
			t.Fatalf("the first command's group wrote %q after the next holder's %q (%d writes after the grant); log tail:\n%s",
				l, lines[granted], len(lines)-i-countPrefix(lines[i:], "grant "), strings.Join(lines[granted:], "\n"))
		}
	}
	if granted < 0 {
		t.Fatalf("the next holder never logged its grant; log:\n%s", strings.Join(lines, "\n"))
	}
}

func countPrefix(lines []string, p string) int {
	n := 0
	for _, l := range lines {
		if strings.HasPrefix(l, p) {
			n++
		}
	}
	return n
}

// waitGone waits until none of pids is alive.
func waitGone(t *testing.T, what string, pids ...int) {
	t.Helper()
	waitFor(t, 10*time.Second, what+" to be gone", func() bool {
		for _, pid := range pids {
			if !procGone(pid) {
				return false
			}
		}
		return true
	})
}

// procGone reports whether pid has exited: gone, or a zombie that nobody
// has reaped yet (an orphan waits for the host's reaper of orphans).
func procGone(pid int) bool {
	if errors.Is(syscall.Kill(pid, 0), syscall.ESRCH) {
		return true
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	i := bytes.LastIndexByte(b, ')')
	return i >= 0 && i+2 < len(b) && b[i+2] == 'Z'
}

// watchdogs returns the pids of the test's leasehold watchdog processes.
func (e *env) watchdogs() []int {
	var out []int
	for _, pid := range marked(e.mark) {
		b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		if args := bytes.Split(b, []byte{0}); len(args) > 1 && string(args[1]) == watchdogCommand && !procGone(pid) {
			out = append(out, pid)
		}
	}
	return out
}

// With the watchdog gone too, SIGKILL of leasehold still ends the command:
// the kernel's parent-death signal, which fires when the thread that
// started the command exits, so leasehold keeps that thread for the
// command's life.
func TestRunParentDeathSignal(t *testing.T) {
	e := newEnv(t)
	log := filepath.Join(e.dir, "log")
	p := e.start(nil, "run", "--key", "job", "--ttl", "30s", "--", "sh", "-c",
		fmt.Sprintf(`trap '' TERM; echo "pid $$" >> %q; while :; do sleep 0.05; done`, log))
	var leader int
	waitFor(t, 10*time.Second, "the command to start", func() bool {
		l := readLines(t, log)
		return len(l) > 0 && func() bool { _, err := fmt.Sscanf(l[0], "pid %d", &leader); return err == nil }()
	})
	wds := e.watchdogs()
	if len(wds) != 1 {
		t.Errorf("found %d watchdog processes, want 1", len(wds))
	}
	for _, pid := range wds {
		syscall.Kill(pid, syscall.SIGKILL)
	}
	waitGone(t, "the watchdog", wds...)
	// Let the runtime spread its goroutines over threads before the kill:
	// the signal must not depend on which thread is alive.
	time.Sleep(100 * time.Millisecond)
	if err := syscall.Kill(p.cmd.Process.Pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	p.wait(t, 10*time.Second)
	waitGone(t, "the command of a SIGKILLed leasehold without its watchdog", leader)
}

// SIGKILL of leasehold: the command's whole group (the leader and a
// grandchild that ignore SIGTERM) is dead before the next holder gets the
// key.
func TestRunKilledLeaseholdLeavesNoCommand(t *testing.T) {
	e := newEnv(t)
	log := filepath.Join(e.dir, "log")
	first := e.start(nil, append([]string{"run", "--key", "job", "--ttl", "2s", "--"}, groupScript(log)...)...)
	leader, grandchild := groupPids(t, log)
	if err := syscall.Kill(first.cmd.Process.Pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	next := e.start(nil, append([]string{"run", "--key", "job", "--ttl", "2s", "--wait", "30s", "--"}, nextHolder(log)...)...)
	code := next.wait(t, 40*time.Second)
	checkNoWriteAfterGrant(t, log)
	if code != 0 {
		t.Fatalf("the next holder exited %d; stderr:\n%s", code, next.stderr.String())
	}
	waitGone(t, "the killed holder's command and grandchild", leader, grandchild)
	first.wait(t, 10*time.Second)
	if !strings.Contains(first.stderr.String(), "leasehold exited while the command ran") {
		t.Errorf("the watchdog did not say why it killed the group; stderr:\n%s", first.stderr.String())
	}
}

// A leasehold stopped (SIGSTOP) past its deadline: its command's group is
// dead before the next holder gets the key; continued, leasehold exits 76.
func TestRunStoppedLeaseholdCommandDeadByDeadline(t *testing.T) {
	e := newEnv(t)
	log := filepath.Join(e.dir, "log")
	first := e.start(nil, append([]string{"run", "--key", "job", "--ttl", "2s", "--"}, groupScript(log)...)...)
	leader, grandchild := groupPids(t, log)
	if err := syscall.Kill(first.cmd.Process.Pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	next := e.start(nil, append([]string{"run", "--key", "job", "--ttl", "2s", "--wait", "30s", "--"}, nextHolder(log)...)...)
	code := next.wait(t, 40*time.Second)
	checkNoWriteAfterGrant(t, log)
	if code != 0 {
		t.Fatalf("the next holder exited %d; stderr:\n%s", code, next.stderr.String())
	}
	waitGone(t, "the stopped holder's grandchild", grandchild)
	if err := syscall.Kill(first.cmd.Process.Pid, syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	if code := first.wait(t, 20*time.Second); code != exitLost {
		t.Fatalf("the continued holder exited %d, want %d; stderr:\n%s", code, exitLost, first.stderr.String())
	}
	waitGone(t, "the stopped holder's command", leader)
	// What happened, said once: the watchdog stopped the command at the
	// deadline, and the lease was lost; not that the command may have run
	// without the lease.
	out := first.stderr.String()
	if strings.Contains(out, "may have run without it") || strings.Count(out, "lost") != 1 || !strings.Contains(out, "watchdog") {
		t.Errorf("the continued holder's stderr should say once that the lease was lost and that the watchdog stopped the command:\n%s", out)
	}
	t.Logf("stderr:\n%s", out)
}

// A store that stalls renewals (another connection holds SQLite's write
// lock): leasehold kills the command's group by the holder's deadline, and
// the next holder, which can write once the lock goes, gets the key after.
func TestRunStalledStoreCommandDeadByDeadline(t *testing.T) {
	e := newEnv(t)
	log := filepath.Join(e.dir, "log")
	first := e.start(nil, append([]string{"run", "--key", "job", "--ttl", "2s", "--"}, groupScript(log)...)...)
	groupPids(t, log)

	db, err := sql.Open("sqlite", strings.TrimPrefix(e.store, "sqlite://"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		t.Fatalf("taking the write lock: %v", err)
	}
	locked := true
	defer func() {
		if locked {
			conn.ExecContext(ctx, "ROLLBACK")
		}
	}()
	// The next holder waits behind the lock like the renewals.
	next := e.start(nil, append([]string{"run", "--key", "job", "--ttl", "2s", "--wait", "30s", "--"}, nextHolder(log)...)...)
	// Let the store go as soon as leasehold starts stopping the command:
	// from then on the key can be had as soon as the store's TTL ends.
	waitFor(t, 20*time.Second, "leasehold to start stopping the command", func() bool {
		return strings.Contains(first.stderr.String(), "stopping the command")
	})
	if _, err := conn.ExecContext(ctx, "ROLLBACK"); err != nil {
		t.Fatal(err)
	}
	locked = false
	code := next.wait(t, 40*time.Second)
	checkNoWriteAfterGrant(t, log)
	if code != 0 {
		t.Fatalf("the next holder exited %d; stderr:\n%s", code, next.stderr.String())
	}
	if code := first.wait(t, 20*time.Second); code != exitLost {
		t.Fatalf("the stalled holder exited %d, want %d; stderr:\n%s", code, exitLost, first.stderr.String())
	}
}

// startRedis starts a throwaway redis-server for t and returns its
// address.
func startRedis(t *testing.T) string {
	t.Helper()
	return testserver.NewRedis(t, testserver.RedisOptions{}).Addr()
}

// Redlock keeps its grants in the process and its tokens are not fences:
// the one-shot commands refuse it, naming it and leasehold run; run warns
// once that LEASEHOLD_TOKEN is no fence. A store with safe tokens does not.
func TestRedlockRefusedAndWarned(t *testing.T) {
	e := newEnv(t)
	store := "redlock://" + startRedis(t)
	code, out, stderr := e.lh(nil, "acquire", "--store", store, "--key", "k")
	if code != exitUsage || strings.Contains(out, "LEASEHOLD_TOKEN") || !strings.Contains(stderr, "the redlock store") || !strings.Contains(stderr, "leasehold run") {
		t.Fatalf("acquire on redlock exited %d, stdout %q, stderr %q; want %d and an error naming the store and leasehold run", code, out, stderr, exitUsage)
	}
	code, _, stderr = e.lh(nil, "release", "--store", store, "--key", "k", "--owner", "0123456789abcdef0123456789abcdef", "--token", "1")
	if code != exitUsage || !strings.Contains(stderr, "the redlock store") {
		t.Fatalf("release on redlock exited %d: %s", code, stderr)
	}
	code, out, stderr = e.lh(nil, "run", "--store", store, "--key", "k", "--", "sh", "-c", `echo "$LEASEHOLD_TOKEN"`)
	if code != 0 || strings.TrimSpace(out) == "" {
		t.Fatalf("run on redlock exited %d, stdout %q: %s", code, out, stderr)
	}
	if n := strings.Count(stderr, "not fencing tokens"); n != 1 {
		t.Fatalf("run on redlock warned %d times that its tokens are not fences, want once; stderr:\n%s", n, stderr)
	}
	code, _, stderr = e.lh(nil, "run", "--key", "k", "--", "true")
	if code != 0 || strings.Contains(stderr, "not fencing tokens") {
		t.Fatalf("run on sqlite exited %d, stderr %q: want no warning", code, stderr)
	}
}
