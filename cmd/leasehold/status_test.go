package main

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// exitedPID returns the process id of a process that has run, exited and
// been reaped.
func exitedPID(t *testing.T) int {
	t.Helper()
	c := exec.Command("true")
	if err := c.Run(); err != nil {
		t.Fatal(err)
	}
	return c.Process.Pid
}

func TestExitedHolder(t *testing.T) {
	host, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	gone := exitedPID(t)
	cases := []struct {
		label string
		want  bool
	}{
		{fmt.Sprintf("%s:%d", host, gone), true},
		{fmt.Sprintf("%s:%d", host, os.Getpid()), false},   // alive
		{fmt.Sprintf("not-%s:%d", host, gone), false},      // another host: cannot tell
		{fmt.Sprintf("%s:%d:%d", host, gone, gone), false}, // not this host's name
		{fmt.Sprintf("%s:x%d", host, gone), false},         // not a pid
		{fmt.Sprintf("%s:0", host), false},                 // kill(0) is the group: never
		{fmt.Sprintf("%s:-%d", host, os.Getpid()), false},  // negative: a group
		{"nightly-backup", false},                          // a label of the user's own
		{fmt.Sprintf("%s:%d", host, gone) + " ", false},    // not as DefaultLabel makes it
	}
	for _, c := range cases {
		if got := exitedHolder(c.label); got != c.want {
			t.Errorf("exitedHolder(%q) = %v, want %v", c.label, got, c.want)
		}
	}
}

// status says that a one-shot holder's process (leasehold acquire, which
// exits once it has the lease) has exited, and how long the lease lasts;
// a holder whose process runs (leasehold run) is shown as it is.
func TestStatusSaysTheHolderExited(t *testing.T) {
	e := newEnv(t)
	code, out, stderr := e.lh(nil, "acquire", "jobs/once", "--ttl", "60s", "--json")
	if code != 0 {
		t.Fatalf("acquire exited %d: %s", code, stderr)
	}
	g := decode[grantJSON](t, "acquire", out)
	code, out, stderr = e.lh(nil, "status", "jobs/once")
	want := fmt.Sprintf("jobs/once: held by %s (that process has exited; the lease lasts until it expires at ", g.Label)
	if code != 0 || !strings.Contains(out, g.Label+" (exited)") || !strings.Contains(out, want) {
		t.Fatalf("status of an acquire's lease exited %d, printed %q, want %q: %s", code, out, want, stderr)
	}
	code, out, _ = e.lh(nil, "status", "jobs/once", "--json")
	if h := decode[holderJSON](t, "status", out); code != 0 || !h.Exited || h.Label != g.Label {
		t.Fatalf("status --json of an acquire's lease exited %d: %s", code, out)
	}

	// And so does the refusal of the key.
	code, _, stderr = e.lh(nil, "acquire", "jobs/once")
	if code != exitHeld || !strings.Contains(stderr, g.Label+" (that process has exited") {
		t.Fatalf("acquire of the held key exited %d: %s", code, stderr)
	}

	ready := e.dir + "/ready"
	p := e.start(nil, "run", "jobs/running", "--ttl", "60s", "--", "sh", "-c", `touch "$1"; sleep 60`, "sh", ready)
	waitFor(t, 20*time.Second, "the run to start its command", func() bool { return fileExists(ready) })
	code, out, _ = e.lh(nil, "status", "--json", "jobs/running")
	h := decode[holderJSON](t, "status", out)
	if code != 0 || h.Exited || !strings.HasSuffix(h.Label, fmt.Sprintf(":%d", p.cmd.Process.Pid)) {
		t.Fatalf("status --json of a running holder (pid %d) exited %d: %s", p.cmd.Process.Pid, code, out)
	}
	if code, out, _ := e.lh(nil, "status"); code != 0 || strings.Count(out, "(exited)") != 1 || strings.Count(out, "has exited") != 1 {
		t.Fatalf("status of both exited %d:\n%s", code, out)
	}
}
