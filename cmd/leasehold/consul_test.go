package main

import (
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/leasehold-go/leasehold/internal/testserver"
)

// The CLI on a real Consul agent: run holds the key while the command runs
// and frees it after; the one-shot commands hand the grant from process to
// process (the store's grants are portable: another process renews the
// session that locks the entry and unlocks it by its token); a held key is
// exit 75, naming the holder.
func TestConsulStore(t *testing.T) {
	e := newEnv(t)
	c := testserver.NewConsul(t, testserver.ConsulOptions{})
	e.store = c.URL(0) + "/cli-test"
	code, out, stderr := e.lh(nil, "run", "--store", e.store, "--key", "k", "--", "true")
	if code != 0 || !strings.Contains(stderr, "warning") || !strings.Contains(stderr, "-dev agent") {
		t.Fatalf("run --store consul://... -- true exited %d, stdout %q, stderr %q", code, out, stderr)
	}
	code, out, stderr = e.lh(nil, "run", "--key", "k", "--ttl", "2s", "--", "sh", "-c", `echo "token=$LEASEHOLD_TOKEN"`)
	if code != 0 || !strings.HasPrefix(strings.TrimSpace(out), "token=") || strings.TrimSpace(out) == "token=" {
		t.Fatalf("run (LEASEHOLD_STORE) exited %d, stdout %q, stderr %q", code, out, stderr)
	}
	code, out, stderr = e.lh(nil, "acquire", "k", "--ttl", "15s")
	if code != 0 || !strings.Contains(out, "LEASEHOLD_TOKEN=") {
		t.Fatalf("acquire exited %d, stdout %q, stderr %q", code, out, stderr)
	}
	vars := exports(out)
	if code, _, stderr := e.lh(nil, "run", "--key", "k", "--", "true"); code != exitHeld || !strings.Contains(stderr, "held") {
		t.Fatalf("run on a held key exited %d (want %d): %s", code, exitHeld, stderr)
	}
	if code, _, stderr := e.lh(vars, "renew", "--ttl", "15s"); code != 0 {
		t.Fatalf("renew from another process exited %d: %s", code, stderr)
	}
	if code, _, stderr := e.lh(vars, "release"); code != 0 {
		t.Fatalf("release from another process exited %d: %s", code, stderr)
	}
	if code, out, stderr := e.lh(nil, "status", "k", "--json"); code != 0 || !strings.Contains(out, `"held":false`) {
		t.Fatalf("status after release exited %d, stdout %q: %s", code, out, stderr)
	}
}

// exports turns acquire's `export NAME=value` lines into NAME=value pairs.
func exports(out string) []string {
	var vars []string
	for _, l := range strings.Split(out, "\n") {
		if kv, ok := strings.CutPrefix(strings.TrimSpace(l), "export "); ok {
			name, val, _ := strings.Cut(kv, "=")
			vars = append(vars, name+"="+strings.Trim(val, `'"`))
		}
	}
	return vars
}

// A run on Consul stopped (SIGSTOP) past its deadline and continued: the
// watchdog killed the command's group at the deadline, and run says so and
// that the lease was lost, once; not that the command may have run without
// the lease.
func TestConsulStoppedRunSaysWhatHappened(t *testing.T) {
	e := newEnv(t)
	c := testserver.NewConsul(t, testserver.ConsulOptions{})
	e.store = c.URL(0) + "/cli-test"
	log := filepath.Join(e.dir, "log")
	first := e.start(nil, append([]string{"run", "--key", "job", "--ttl", "2s", "--"}, groupScript(log)...)...)
	leader, grandchild := groupPids(t, log)
	if err := syscall.Kill(first.cmd.Process.Pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	waitGone(t, "the stopped holder's command group", leader, grandchild)
	if err := syscall.Kill(first.cmd.Process.Pid, syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	if code := first.wait(t, 30*time.Second); code != exitLost {
		t.Fatalf("the continued holder exited %d, want %d; stderr:\n%s", code, exitLost, first.stderr.String())
	}
	out := first.stderr.String()
	lost := 0 // lines that report the loss (the store's warning may say "lost" too)
	for _, l := range strings.Split(out, "\n") {
		if !strings.Contains(l, ": warning: ") && strings.Contains(l, "lost") {
			lost++
		}
	}
	if strings.Contains(out, "may have run without it") || lost != 1 || !strings.Contains(out, "watchdog") {
		t.Errorf("stderr should say once that the lease was lost and that the watchdog stopped the command:\n%s", out)
	}
	t.Logf("stderr:\n%s", out)
}

// status on a key held by another process's grant: Consul does not tell a
// session's time left, so REMAINING is "up to" the bound (twice the
// session's TTL plus its lock-delay: 22 s for a 2 s TTL), not 0s.
func TestConsulStatusRemainingBound(t *testing.T) {
	e := newEnv(t)
	c := testserver.NewConsul(t, testserver.ConsulOptions{})
	e.store = c.URL(0) + "/cli-test"
	if code, out, stderr := e.lh(nil, "acquire", "k", "--ttl", "2s"); code != 0 {
		t.Fatalf("acquire exited %d, stdout %q, stderr %q", code, out, stderr)
	}
	code, out, stderr := e.lh(nil, "status", "k")
	if code != 0 || !strings.Contains(out, "up to 22s") || strings.Contains(out, " 0s") {
		t.Fatalf("status exited %d, stdout %q, stderr %q; want REMAINING \"up to 22s\"", code, out, stderr)
	}
	code, out, _ = e.lh(nil, "status", "k", "--json")
	if code != 0 || !strings.Contains(out, `"remaining":"up to 22s"`) || !strings.Contains(out, `"max_remaining_ms":22000`) {
		t.Fatalf("status --json exited %d, stdout %q", code, out)
	}
}
