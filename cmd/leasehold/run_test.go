package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// logScript is a command that logs "start TOKEN" and "end TOKEN" around a
// short sleep, with the token leasehold gave it.
func logScript(log string) []string {
	return []string{"sh", "-c", fmt.Sprintf(`echo "start $LEASEHOLD_TOKEN" >> %[1]q; sleep 0.3; echo "end $LEASEHOLD_TOKEN" >> %[1]q`, log)}
}

// checkSerial checks that the log is start/end pairs with the same token,
// never interleaved, with tokens strictly increasing. It returns the tokens.
func checkSerial(t *testing.T, lines []string) []uint64 {
	t.Helper()
	if len(lines)%2 != 0 {
		t.Fatalf("log has an odd number of lines:\n%s", strings.Join(lines, "\n"))
	}
	var tokens []uint64
	for i := 0; i < len(lines); i += 2 {
		var a, b uint64
		if _, err := fmt.Sscanf(lines[i], "start %d", &a); err != nil {
			t.Fatalf("line %d %q: want start TOKEN; log:\n%s", i, lines[i], strings.Join(lines, "\n"))
		}
		if _, err := fmt.Sscanf(lines[i+1], "end %d", &b); err != nil || a != b {
			t.Fatalf("line %d %q: want end %d (commands overlapped); log:\n%s", i+1, lines[i+1], a, strings.Join(lines, "\n"))
		}
		if len(tokens) > 0 && a <= tokens[len(tokens)-1] {
			t.Fatalf("token %d after token %d: not increasing; log:\n%s", a, tokens[len(tokens)-1], strings.Join(lines, "\n"))
		}
		tokens = append(tokens, a)
	}
	return tokens
}

// Two runs on one key and one file: the second starts after the first ends,
// with a higher token.
func TestRunTwoProcessesTakeTurns(t *testing.T) {
	e := newEnv(t)
	log := filepath.Join(e.dir, "log")
	args := append([]string{"run", "--key", "job", "--ttl", "2s", "--wait", "20s", "--"}, logScript(log)...)
	first := e.start(nil, args...)
	waitFor(t, 10*time.Second, "the first command to start", func() bool { return len(readLines(t, log)) > 0 })
	second := e.start(nil, args...)
	for i, p := range []*proc{first, second} {
		if code := p.wait(t, 30*time.Second); code != 0 {
			t.Fatalf("run %d exited %d; stderr:\n%s", i+1, code, p.stderr.String())
		}
	}
	if tokens := checkSerial(t, readLines(t, log)); len(tokens) != 2 {
		t.Fatalf("want 2 runs in the log, got %d", len(tokens))
	}
}

// Several runs started together never overlap.
func TestRunContendersNeverOverlap(t *testing.T) {
	e := newEnv(t)
	log := filepath.Join(e.dir, "log")
	args := append([]string{"run", "--key", "job", "--ttl", "2s", "--wait", "30s", "--"}, logScript(log)...)
	var ps []*proc
	for range 4 {
		ps = append(ps, e.start(nil, args...))
	}
	for i, p := range ps {
		if code := p.wait(t, 40*time.Second); code != 0 {
			t.Fatalf("run %d exited %d; stderr:\n%s", i+1, code, p.stderr.String())
		}
	}
	if tokens := checkSerial(t, readLines(t, log)); len(tokens) != len(ps) {
		t.Fatalf("want %d runs in the log, got %d", len(ps), len(tokens))
	}
}

// A holder stopped (SIGSTOP) for longer than its TTL loses the key to a
// second run with a higher token; once continued, it terminates its command
// and exits 76.
func TestRunStoppedHolderLosesAndExits76(t *testing.T) {
	e := newEnv(t)
	log := filepath.Join(e.dir, "log")
	long := fmt.Sprintf(`echo "start $LEASEHOLD_TOKEN $$" >> %[1]q; trap 'echo "term $LEASEHOLD_TOKEN" >> %[1]q; exit 0' TERM; while :; do sleep 0.05; done`, log)
	// A 3 s TTL gives the command about 460 ms between SIGTERM and SIGKILL
	// (1 s gives 150 ms, which a loaded machine can miss).
	first := e.start(nil, "run", "--key", "job", "--ttl", "3s", "--", "sh", "-c", long)
	waitFor(t, 10*time.Second, "the first command to start", func() bool { return len(readLines(t, log)) > 0 })
	var tok1, pid1 int
	if _, err := fmt.Sscanf(readLines(t, log)[0], "start %d %d", &tok1, &pid1); err != nil {
		t.Fatalf("log %q: %v", readLines(t, log)[0], err)
	}
	if err := syscall.Kill(first.cmd.Process.Pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}

	log2 := filepath.Join(e.dir, "log2")
	second := e.start(nil, "run", "--key", "job", "--ttl", "3s", "--wait", "20s", "--",
		"sh", "-c", fmt.Sprintf(`echo "$LEASEHOLD_TOKEN" > %q`, log2))
	if code := second.wait(t, 30*time.Second); code != 0 {
		t.Fatalf("second run exited %d; stderr:\n%s", code, second.stderr.String())
	}
	lines := readLines(t, log2)
	if len(lines) != 1 {
		t.Fatalf("second command's log: %q", lines)
	}
	tok2, _ := strconv.Atoi(lines[0])
	if tok2 <= tok1 {
		t.Fatalf("second token %d is not above the first %d", tok2, tok1)
	}

	if err := syscall.Kill(first.cmd.Process.Pid, syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	if code := first.wait(t, 20*time.Second); code != exitLost {
		t.Fatalf("continued first run exited %d, want %d; stderr:\n%s", code, exitLost, first.stderr.String())
	}
	if !strings.Contains(first.stderr.String(), "lost") {
		t.Errorf("first run's stderr does not say the lease was lost:\n%s", first.stderr.String())
	}
	if got := readLines(t, log); len(got) != 2 || got[1] != fmt.Sprintf("term %d", tok1) {
		t.Errorf("first command was not terminated with SIGTERM; log: %q", got)
	}
	if err := syscall.Kill(pid1, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("first command (pid %d) still exists after leasehold exited: kill 0: %v", pid1, err)
	}
}

// A command that ignores SIGTERM is killed after the grace period.
func TestRunLostCommandKilledAfterGrace(t *testing.T) {
	e := newEnv(t)
	log := filepath.Join(e.dir, "log")
	stubborn := fmt.Sprintf(`trap '' TERM; echo "start $LEASEHOLD_TOKEN" >> %q; while :; do sleep 0.05; done`, log)
	first := e.start(nil, "run", "--key", "job", "--ttl", "1s", "--grace", "100ms", "--", "sh", "-c", stubborn)
	waitFor(t, 10*time.Second, "the command to start", func() bool { return len(readLines(t, log)) > 0 })
	// Take the key from under it: stop it past its TTL and let another
	// holder in, then continue it.
	syscall.Kill(first.cmd.Process.Pid, syscall.SIGSTOP)
	code, _, stderr := e.lh(nil, "acquire", "--key", "job", "--ttl", "30s", "--wait", "20s")
	if code != 0 {
		t.Fatalf("acquire exited %d: %s", code, stderr)
	}
	syscall.Kill(first.cmd.Process.Pid, syscall.SIGCONT)
	if code := first.wait(t, 20*time.Second); code != exitLost {
		t.Fatalf("run exited %d, want %d; stderr:\n%s", code, exitLost, first.stderr.String())
	}
	if !strings.Contains(first.stderr.String(), "SIGKILL") {
		t.Errorf("stderr does not mention SIGKILL:\n%s", first.stderr.String())
	}
}

// A held key: exit 75, the holder on stderr, the command not run.
func TestRunHeldExits75(t *testing.T) {
	e := newEnv(t)
	code, out, stderr := e.lh(nil, "acquire", "--key", "job", "--ttl", "1m", "--label", "the-holder", "--json")
	if code != 0 {
		t.Fatalf("acquire exited %d: %s", code, stderr)
	}
	var g grantJSON
	if err := json.Unmarshal([]byte(out), &g); err != nil {
		t.Fatalf("acquire --json output %q: %v", out, err)
	}
	marker := filepath.Join(e.dir, "ran")
	code, _, stderr = e.lh(nil, "run", "--key", "job", "--", "touch", marker)
	if code != exitHeld {
		t.Fatalf("run on a held key exited %d, want %d; stderr: %s", code, exitHeld, stderr)
	}
	for _, want := range []string{`"job"`, "the-holder", fmt.Sprintf("token %d", g.Token), "for another"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr %q does not contain %q", stderr, want)
		}
	}
	if fileExists(marker) {
		t.Error("the command ran although the key was held")
	}
	// With a wait that runs out: 75 as well.
	code, _, stderr = e.lh(nil, "run", "--key", "job", "--wait", "200ms", "--", "touch", marker)
	if code != exitHeld || !strings.Contains(stderr, "the-holder") {
		t.Fatalf("run --wait 200ms on a held key exited %d, want %d; stderr: %s", code, exitHeld, stderr)
	}
}

// The command's exit status is run's, and the lease is released after.
func TestRunExitStatusPassthrough(t *testing.T) {
	e := newEnv(t)
	for _, c := range []struct {
		script string
		want   int
	}{
		{"exit 0", 0},
		{"exit 42", 42},
		{"kill -KILL $$", 128 + 9},
	} {
		code, _, stderr := e.lh(nil, "run", "--key", "job", "--", "sh", "-c", c.script)
		if code != c.want {
			t.Errorf("run -- sh -c %q exited %d, want %d; stderr: %s", c.script, code, c.want, stderr)
		}
		e.checkFree(t, "job")
	}
	code, _, stderr := e.lh(nil, "run", "--key", "job", "--", filepath.Join(e.dir, "no-such-command"))
	if code != exitNotFound {
		t.Errorf("run of a missing command exited %d, want %d; stderr: %s", code, exitNotFound, stderr)
	}
	e.checkFree(t, "job")
}

// The command sees its key, token and owner.
func TestRunEnvironment(t *testing.T) {
	e := newEnv(t)
	code, out, stderr := e.lh(nil, "run", "--key", "job/1", "--", "sh", "-c", `echo "$LEASEHOLD_KEY $LEASEHOLD_TOKEN $LEASEHOLD_OWNER"`)
	if code != 0 {
		t.Fatalf("run exited %d: %s", code, stderr)
	}
	f := strings.Fields(out)
	if len(f) != 3 || f[0] != "job/1" || f[1] != "1" || len(f[2]) < 32 {
		t.Fatalf("command saw %q, want key, token 1 and a 128-bit owner", out)
	}
}

// SIGINT to leasehold reaches the command; its status is returned and the
// lease released.
func TestRunInterruptPassedOn(t *testing.T) {
	e := newEnv(t)
	log := filepath.Join(e.dir, "log")
	script := fmt.Sprintf(`trap 'echo int >> %[1]q; exit 7' INT; echo ready >> %[1]q; while :; do sleep 0.05; done`, log)
	p := e.start(nil, "run", "--key", "job", "--ttl", "30s", "--", "sh", "-c", script)
	waitFor(t, 10*time.Second, "the command to start", func() bool { return len(readLines(t, log)) > 0 })
	if err := syscall.Kill(p.cmd.Process.Pid, syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	if code := p.wait(t, 20*time.Second); code != 7 {
		t.Fatalf("run exited %d after SIGINT, want the command's 7; stderr:\n%s", code, p.stderr.String())
	}
	if got := readLines(t, log); len(got) != 2 || got[1] != "int" {
		t.Errorf("the command did not get SIGINT; log %q", got)
	}
	e.checkFree(t, "job") // released at once, not after the 30 s TTL
}

// SIGTERM to a run still waiting for the key ends it with 128+15 and
// leaves nothing behind.
func TestRunInterruptWhileWaiting(t *testing.T) {
	e := newEnv(t)
	if code, _, stderr := e.lh(nil, "acquire", "--key", "job", "--ttl", "1m"); code != 0 {
		t.Fatalf("acquire exited %d: %s", code, stderr)
	}
	p := e.start(nil, "run", "--key", "job", "--wait", "1m", "--", "true")
	time.Sleep(300 * time.Millisecond) // let it start waiting; the test holds either way
	syscall.Kill(p.cmd.Process.Pid, syscall.SIGTERM)
	if code := p.wait(t, 20*time.Second); code != 128+15 || !strings.Contains(p.stderr.String(), "interrupted by SIGTERM before the lease") {
		t.Fatalf("run exited %d after SIGTERM while waiting, want %d and the signal named; stderr:\n%s", code, 128+15, p.stderr.String())
	}
}

// The default store is a file under XDG_STATE_HOME, created on first use.
func TestRunDefaultStore(t *testing.T) {
	e := newEnv(t)
	e.store = "" // LEASEHOLD_STORE empty: the default
	if code, _, stderr := e.lh(nil, "run", "--key", "job", "--", "true"); code != 0 {
		t.Fatalf("run exited %d: %s", code, stderr)
	}
	if path := filepath.Join(e.dir, "state", "leasehold", "leases.db"); !fileExists(path) {
		t.Fatalf("default store %s not created", path)
	}
}

// checkFree fails the test unless key is free.
func (e *env) checkFree(t *testing.T, key string) {
	t.Helper()
	code, out, stderr := e.lh(nil, "status", "--key", key, "--json")
	if code != 0 {
		t.Fatalf("status exited %d: %s", code, stderr)
	}
	var h holderJSON
	if err := json.Unmarshal([]byte(out), &h); err != nil {
		t.Fatalf("status --json output %q: %v", out, err)
	}
	if h.Held {
		t.Fatalf("key %q is still held: %s", key, out)
	}
}
