//go:build unix

package main

import (
	"bytes"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// TestGuardPastDeadlineKillsBeforeHearingWatchdog: when the guard finds the
// deadline already passed (leasehold was stopped or starved past it) and the
// watchdog says nothing (it was stopped too), the command's group is killed
// at once, not after the guard has waited to hear the watchdog: the store's
// expiry is at most the drift margin past the deadline.
func TestGuardPastDeadlineKillsBeforeHearingWatchdog(t *testing.T) {
	c, err := startGroup(exec.Command("sleep", "60"), -1)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.signal(9); <-c.exited })
	var stderr bytes.Buffer
	g := &guard{
		a:        &app{stderr: &stderr},
		f:        runFlags{name: "run"},
		c:        c,
		wd:       &watchdog{events: make(chan string)}, // a watchdog that never reports
		deadline: time.Now().Add(-time.Millisecond),
	}
	heard := make(chan struct{})
	go func() {
		defer close(heard)
		g.awaitWatchdog(time.Until(g.deadline))
	}()
	// The watchdog reports only once the command is dead: a guard that
	// waits to hear it before killing never sees the command end.
	select {
	case <-c.exited:
	case <-time.After(time.Minute):
		t.Fatalf("the command still runs a minute past the deadline; stderr: %s", stderr.String())
	}
	select {
	case g.wd.events <- "kill":
	case <-heard:
	}
	<-heard
	if said := stderr.String(); !g.stopping || !g.killed || !strings.Contains(said, "sent SIGKILL") && !strings.Contains(said, "watchdog began stopping") {
		t.Fatalf("stopping %v, killed %v; stderr: %q", g.stopping, g.killed, stderr.String())
	}
}
