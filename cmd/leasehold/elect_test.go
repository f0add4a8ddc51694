package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Two candidates and an observer: the first leads, the second waits; when
// the first's command ends, the second leads with a higher epoch, and the
// observer prints both leaders in order.
func TestElectAndObserve(t *testing.T) {
	e := newEnv(t)
	obs := e.start(nil, "observe", "jobs/leader", "--json", "--ttl", "3s")
	first := e.start(nil, "elect", "jobs/leader", "--ttl", "3s", "--label", "first", "--",
		"sh", "-c", `echo "epoch $LEASEHOLD_EPOCH token $LEASEHOLD_TOKEN"; exec sleep 60`)
	waitFor(t, 20*time.Second, "the first candidate to lead", func() bool { return strings.Contains(first.stdout.String(), "epoch ") })
	// On this store (no native watch), observe reads at least every third
	// of the TTL: a leader it should see must lead longer than that.
	waitFor(t, 20*time.Second, "the observer to see the first leader", func() bool { return strings.Contains(obs.stdout.String(), `"label":"first"`) })
	second := e.start(nil, "elect", "jobs/leader", "--ttl", "3s", "--label", "second", "--",
		"sh", "-c", `echo "epoch $LEASEHOLD_EPOCH"; sleep 2; exit 7`) // longer than observe's poll interval
	if err := first.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code := first.wait(t, 20*time.Second); code != 143 {
		t.Fatalf("the first candidate exited %d, want 143 (its command's SIGTERM); stderr:\n%s", code, first.stderr.String())
	}
	if code := second.wait(t, 20*time.Second); code != 7 {
		t.Fatalf("the second candidate exited %d, want its command's 7; stderr:\n%s", code, second.stderr.String())
	}
	var e1, t1, e2 uint64
	if _, err := fmt.Sscanf(first.stdout.String(), "epoch %d token %d", &e1, &t1); err != nil || e1 == 0 || e1 != t1 {
		t.Fatalf("first candidate's output %q: epoch %d, token %d (%v)", first.stdout.String(), e1, t1, err)
	}
	if _, err := fmt.Sscanf(second.stdout.String(), "epoch %d", &e2); err != nil || e2 <= e1 {
		t.Fatalf("second candidate's epoch %d is not above the first's %d (%v)", e2, e1, err)
	}
	var leaders []stateJSON
	for deadline := time.Now().Add(20 * time.Second); len(leaders) < 2; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the observer did not see both leaders; its output:\n%s\nstderr:\n%s", obs.stdout.String(), obs.stderr.String())
		}
		leaders = leaders[:0]
		for _, line := range strings.Split(strings.TrimSpace(obs.stdout.String()), "\n") {
			var s stateJSON
			if json.Unmarshal([]byte(line), &s) == nil && s.Leading {
				leaders = append(leaders, s)
			}
		}
	}
	if leaders[0].Epoch != e1 || leaders[0].Label != "first" || leaders[1].Epoch != e2 || leaders[1].Label != "second" {
		t.Fatalf("observed leaders %+v, want first (epoch %d) then second (epoch %d)", leaders, e1, e2)
	}
	if err := obs.cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	if code := obs.wait(t, 20*time.Second); code != 0 {
		t.Fatalf("observe exited %d after SIGINT, want 0; stderr:\n%s", code, obs.stderr.String())
	}
}

// With --once, a candidate whose leadership is lost (it was stopped past
// its deadline, and another leads) exits 76; the next leader's epoch is
// higher.
func TestElectOnceExitsOnLoss(t *testing.T) {
	e := newEnv(t)
	first := e.start(nil, "elect", "jobs/once", "--ttl", "1s", "--once", "--", "sh", "-c", `echo "epoch $LEASEHOLD_EPOCH"; exec sleep 60`)
	waitFor(t, 20*time.Second, "the first candidate to lead", func() bool { return strings.Contains(first.stdout.String(), "epoch ") })
	if err := syscall.Kill(first.cmd.Process.Pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	second := e.start(nil, "elect", "jobs/once", "--ttl", "1s", "--", "sh", "-c", `echo "epoch $LEASEHOLD_EPOCH"`)
	if code := second.wait(t, 30*time.Second); code != 0 {
		t.Fatalf("the second candidate exited %d; stderr:\n%s", code, second.stderr.String())
	}
	if err := syscall.Kill(first.cmd.Process.Pid, syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	if code := first.wait(t, 30*time.Second); code != exitLost {
		t.Fatalf("elect --once exited %d after losing, want %d; stderr:\n%s", code, exitLost, first.stderr.String())
	}
	var e1, e2 uint64
	fmt.Sscanf(first.stdout.String(), "epoch %d", &e1)
	fmt.Sscanf(second.stdout.String(), "epoch %d", &e2)
	if e1 == 0 || e2 <= e1 {
		t.Fatalf("epochs %d then %d, want increasing", e1, e2)
	}
}
