package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// slotScript is a command that logs "start SLOT TOKEN KEY" and "end SLOT
// TOKEN KEY" around a short sleep, with what leasehold gave it, and waits
// for the file gate (if not empty) before it ends.
func slotScript(log, gate string) []string {
	wait := ""
	if gate != "" {
		wait = fmt.Sprintf("while [ ! -e %q ]; do sleep 0.05; done; ", gate)
	}
	return []string{"sh", "-c", fmt.Sprintf(`echo "start $LEASEHOLD_SLOT $LEASEHOLD_TOKEN $LEASEHOLD_KEY" >> %[1]q; %[2]ssleep 0.3; echo "end $LEASEHOLD_SLOT $LEASEHOLD_TOKEN $LEASEHOLD_KEY" >> %[1]q`, log, wait)}
}

// checkSlots replays the log: never more than n commands at once, never two
// on one slot, each on the slot key its LEASEHOLD_SLOT names, and each
// slot's tokens increasing. It returns the number of commands that ran.
func checkSlots(t *testing.T, lines []string, key string, n int) int {
	t.Helper()
	running := map[int]uint64{} // slot to token
	last := map[int]uint64{}
	ran := 0
	for i, line := range lines {
		var what, k string
		var slot int
		var token uint64
		if _, err := fmt.Sscanf(line, "%s %d %d %s", &what, &slot, &token, &k); err != nil || k != fmt.Sprintf("%s/slot/%d", key, slot) || slot < 0 || slot >= n {
			t.Fatalf("line %d %q: want start|end SLOT TOKEN %s/slot/SLOT with SLOT below %d; log:\n%s", i, line, key, n, strings.Join(lines, "\n"))
		}
		switch _, busy := running[slot]; {
		case what == "start" && busy:
			t.Fatalf("line %d: slot %d started while held (token %d); log:\n%s", i, slot, running[slot], strings.Join(lines, "\n"))
		case what == "start" && token <= last[slot]:
			t.Fatalf("line %d: slot %d token %d after %d; log:\n%s", i, slot, token, last[slot], strings.Join(lines, "\n"))
		case what == "start":
			running[slot], last[slot] = token, token
			ran++
			if len(running) > n {
				t.Fatalf("line %d: %d commands at once, want at most %d; log:\n%s", i, len(running), n, strings.Join(lines, "\n"))
			}
		case what == "end" && running[slot] == token:
			delete(running, slot)
		default:
			t.Fatalf("line %d %q: ends what did not start; log:\n%s", i, line, strings.Join(lines, "\n"))
		}
	}
	return ran
}

// N+1 runs with --slots N started together: never more than N commands at
// once, each on its own slot; the one left over waits for a slot.
func TestRunSlotsNeverMoreThanN(t *testing.T) {
	const n = 2
	e := newEnv(t)
	log := filepath.Join(e.dir, "log")
	args := append([]string{"run", "--key", "pool", "--slots", fmt.Sprint(n), "--ttl", "2s", "--wait", "30s", "--"}, slotScript(log, "")...)
	var ps []*proc
	for range n + 1 {
		ps = append(ps, e.start(nil, args...))
	}
	for i, p := range ps {
		if code := p.wait(t, 40*time.Second); code != 0 {
			t.Fatalf("run %d exited %d; stderr:\n%s", i+1, code, p.stderr.String())
		}
	}
	if ran := checkSlots(t, readLines(t, log), "pool", n); ran != n+1 {
		t.Fatalf("want %d runs in the log, got %d", n+1, ran)
	}
}

// With every slot held, a run that does not wait exits 75 without running
// its command and says the slots are held; one that waits runs once a slot
// frees.
func TestRunSlotsFullExits75(t *testing.T) {
	const n = 2
	e := newEnv(t)
	log, gate := filepath.Join(e.dir, "log"), filepath.Join(e.dir, "gate")
	args := append([]string{"run", "--key", "pool", "--slots", fmt.Sprint(n), "--ttl", "2s", "--wait", "30s", "--"}, slotScript(log, gate)...)
	var ps []*proc
	for range n {
		ps = append(ps, e.start(nil, args...))
	}
	waitFor(t, 20*time.Second, "both holders' commands to start", func() bool { return len(readLines(t, log)) == n })
	marker := filepath.Join(e.dir, "ran")
	code, _, stderr := e.lh(nil, "run", "--key", "pool", "--slots", fmt.Sprint(n), "--", "touch", marker)
	if code != exitHeld || !strings.Contains(stderr, `"pool": all 2 slots are held`) {
		t.Fatalf("run on a full semaphore exited %d, want %d; stderr: %s", code, exitHeld, stderr)
	}
	if fileExists(marker) {
		t.Error("the command ran although every slot was held")
	}
	waiter := e.start(nil, args...)
	e.lh(nil, "run", "--key", "gate", "--", "touch", gate)
	for i, p := range append(ps, waiter) {
		if code := p.wait(t, 40*time.Second); code != 0 {
			t.Fatalf("run %d exited %d; stderr:\n%s", i+1, code, p.stderr.String())
		}
	}
	if ran := checkSlots(t, readLines(t, log), "pool", n); ran != n+1 {
		t.Fatalf("want %d runs in the log, got %d", n+1, ran)
	}
}

// Bad --slots values are usage errors.
func TestRunSlotsRefused(t *testing.T) {
	e := newEnv(t)
	for _, v := range []string{"-1", "1025", "x"} {
		code, _, stderr := e.lh(nil, "run", "--key", "pool", "--slots", v, "--", "true")
		if code != exitUsage {
			t.Errorf("--slots %s exited %d, want %d; stderr: %s", v, code, exitUsage, stderr)
		}
	}
}
