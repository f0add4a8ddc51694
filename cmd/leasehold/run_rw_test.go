package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// rwScript is a command for run --read or --write that logs "start NAME
// MODE EPOCH" and "end NAME" around its work: a writer sleeps briefly; a
// reader waits (up to 20 s) until two readers have started and the file
// log+".go" exists, so the log shows two readers overlapping only if the
// lock let them share, and the test decides when they end.
func rwScript(log, name string) []string {
	wait := fmt.Sprintf(`i=0; while { [ "$(grep -c '^start r' %[1]q)" -lt 2 ] || [ ! -e %[1]q.go ]; } && [ $i -lt 400 ]; do sleep 0.05; i=$((i+1)); done`, log)
	if strings.HasPrefix(name, "w") {
		wait = "sleep 0.3"
	}
	return []string{"sh", "-c", fmt.Sprintf(`echo "start $0 $LEASEHOLD_MODE $LEASEHOLD_EPOCH" >> %[1]q; %[2]s; echo "end $0" >> %[1]q`, log, wait), name}
}

// Two readers overlap; a writer started while they read, which the test
// sees waiting (holding the gate) before it lets the readers end, runs
// after both, and a third reader started while the writer waits runs after
// it. The log's order is the order of the events, so no clock is compared.
func TestRunReadWriteLock(t *testing.T) {
	e := newEnv(t)
	log := filepath.Join(e.dir, "log")
	run := func(mode, name string) *proc {
		args := append([]string{"run", mode, "doc", "--ttl", "2s", "--wait", "30s", "--"}, rwScript(log, name)...)
		return e.start(nil, args...)
	}
	r1, r2 := run("--read", "r1"), run("--read", "r2")
	waitFor(t, 20*time.Second, "two readers to start", func() bool { return len(readLines(t, log)) >= 2 })
	w := run("--write", "w1")
	waitFor(t, 20*time.Second, "the writer to take the gate", func() bool {
		p := e.start(nil, "status", "--json", "doc/w")
		return p.wait(t, 20*time.Second) == 0 && strings.Contains(p.stdout.String(), `"held":true`)
	})
	if err := os.WriteFile(log+".go", nil, 0o600); err != nil {
		t.Fatal(err)
	}
	r3 := run("--read", "r3")
	for i, p := range []*proc{r1, r2, w, r3} {
		if code := p.wait(t, 40*time.Second); code != 0 {
			t.Fatalf("run %d exited %d; stderr:\n%s", i+1, code, p.stderr.String())
		}
	}
	checkRWLog(t, readLines(t, log))
}

// checkRWLog checks the log of TestRunReadWriteLock: r1 and r2 overlap,
// the writer overlaps nobody, runs after r1 and r2 and before r3 (which
// started while it waited), and its epoch is above theirs and below r3's.
func checkRWLog(t *testing.T, lines []string) {
	t.Helper()
	at := map[string]int{} // "start r1", "end r1", ... -> line
	epochs := map[string]uint64{}
	for i, l := range lines {
		f := strings.Fields(l)
		at[f[0]+" "+f[1]] = i
		if f[0] == "start" {
			var mode string
			var epoch uint64
			if _, err := fmt.Sscanf(strings.Join(f[2:], " "), "%s %d", &mode, &epoch); err != nil || mode != map[bool]string{true: "write", false: "read"}[f[1] == "w1"] {
				t.Fatalf("line %q: want start NAME MODE EPOCH with LEASEHOLD_MODE of its kind; log:\n%s", l, strings.Join(lines, "\n"))
			}
			epochs[f[1]] = epoch
		}
	}
	fail := func(what string) {
		t.Helper()
		t.Fatalf("%s; log:\n%s", what, strings.Join(lines, "\n"))
	}
	if len(lines) != 8 || len(at) != 8 {
		fail("want a start and an end for r1, r2, w1, r3")
	}
	if !(at["start r1"] < at["end r2"] && at["start r2"] < at["end r1"]) {
		fail("the two readers did not overlap")
	}
	if at["end w1"] != at["start w1"]+1 {
		fail("something happened while the writer held the lock")
	}
	if !(at["end r1"] < at["start w1"] && at["end r2"] < at["start w1"] && at["end w1"] < at["start r3"]) {
		fail("the writer did not run between the first readers and the third")
	}
	if e := []uint64{max(epochs["r1"], epochs["r2"]), epochs["w1"], epochs["r3"]}; !slices.IsSorted(e) || e[0] == e[1] || e[1] == e[2] {
		fail(fmt.Sprintf("epochs %v: want the readers' below the writer's below the third reader's", epochs))
	}
}

func TestCheckMode(t *testing.T) {
	tests := []struct {
		read, write bool
		slots       int
		want        string // the mode, or "error"
	}{
		{false, false, 0, "Mode(0)"},
		{true, false, 0, "read"},
		{false, true, 0, "write"},
		{true, true, 0, "error"},
		{false, false, 3, "Mode(0)"},
		{true, false, 3, "error"},
		{false, true, 3, "error"},
	}
	for _, tc := range tests {
		f := runFlags{slots: tc.slots}
		err := f.checkMode(tc.read, tc.write)
		got := f.mode.String()
		if err != nil {
			var ue *usageError
			if !errors.As(err, &ue) {
				t.Errorf("checkMode(%v, %v): %v is not a usage error", tc.read, tc.write, err)
			}
			got = "error"
		}
		if got != tc.want {
			t.Errorf("checkMode(%v, %v) = %s, want %s", tc.read, tc.write, got, tc.want)
		}
	}
}
