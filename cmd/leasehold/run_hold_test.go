package main

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/leasehold-go/leasehold"
)

// onceScript is a command that appends "ran KEY" to log, then exits with
// status code.
func onceScript(log string, code int) []string {
	return []string{"sh", "-c", fmt.Sprintf(`echo "ran $LEASEHOLD_KEY" >> %q; exit %d`, log, code)}
}

// Two runs of one --tick job, one after the other within the tick: the
// first runs the command and holds the tick's key after it exits (saying
// so), the second exits 75 without running it. A signal ends the first's
// hold early: it exits 143 and the key is free. Should the tick change
// between the two runs (they straddle its end), the test starts over, on
// a fresh key.
func TestRunTickOncePerTick(t *testing.T) {
	const tick = 24 * time.Hour
	e := newEnv(t)
	for attempt := range 2 {
		key := fmt.Sprintf("jobs/report%d", attempt)
		log := filepath.Join(e.dir, key[len("jobs/"):])
		want := leasehold.TickKey(key, time.Now(), tick)
		args := append([]string{"run", "--tick", "24h", key, "--"}, onceScript(log, 0)...)
		first := e.start(nil, args...)
		waitFor(t, 20*time.Second, "the first run to hold on after its command", func() bool {
			return strings.Contains(first.stderr.String(), "holding")
		})
		code, _, stderr := e.lh(nil, args...)
		if leasehold.TickKey(key, time.Now(), tick) != want {
			first.cmd.Process.Signal(syscall.SIGTERM)
			first.wait(t, 20*time.Second)
			continue // the runs straddled a tick's end
		}
		if code != exitHeld || !strings.Contains(stderr, want) {
			t.Fatalf("the second run in the tick exited %d, want %d naming %s; stderr: %s", code, exitHeld, want, stderr)
		}
		if lines := readLines(t, log); len(lines) != 1 || lines[0] != "ran "+want {
			t.Fatalf("the log is %q, want one run of %s", lines, want)
		}
		if err := first.cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		if code := first.wait(t, 20*time.Second); code != 128+int(syscall.SIGTERM) || !strings.Contains(first.stderr.String(), "released early") {
			t.Fatalf("the first run exited %d on SIGTERM during its hold, want %d saying it released early; stderr:\n%s", code, 128+int(syscall.SIGTERM), first.stderr.String())
		}
		e.checkFree(t, want)
		return
	}
	t.Fatal("both attempts straddled a tick's end")
}

// --min-hold keeps a second run out after the first's command exited; once
// the hold has passed, the first exits with its command's status and the
// key is free for the next run.
func TestRunMinHoldKeepsOthersOut(t *testing.T) {
	e := newEnv(t)
	log := filepath.Join(e.dir, "log")
	first := e.start(nil, append([]string{"run", "--min-hold", "1h", "job", "--"}, onceScript(log, 0)...)...)
	waitFor(t, 20*time.Second, "the first run to hold on after its command", func() bool {
		return strings.Contains(first.stderr.String(), "holding")
	})
	marker := filepath.Join(e.dir, "ran")
	code, _, stderr := e.lh(nil, "run", "job", "--", "touch", marker)
	if code != exitHeld || fileExists(marker) {
		t.Fatalf("a run during the first's --min-hold exited %d (want %d), command ran: %v; stderr: %s", code, exitHeld, fileExists(marker), stderr)
	}
	first.cmd.Process.Signal(syscall.SIGINT)
	if code := first.wait(t, 20*time.Second); code != 128+int(syscall.SIGINT) {
		t.Fatalf("the first run exited %d on SIGINT during its hold, want %d; stderr:\n%s", code, 128+int(syscall.SIGINT), first.stderr.String())
	}

	// A short hold ends by itself: run exits with the command's status,
	// and a later run gets the key.
	code, _, stderr = e.lh(nil, append([]string{"run", "--min-hold", "1s", "job", "--"}, onceScript(log, 3)...)...)
	if code != 3 || !strings.Contains(stderr, "the command exited 3; holding \"job\"") {
		t.Fatalf("run --min-hold 1s exited %d, want the command's 3 after saying it held on; stderr: %s", code, stderr)
	}
	if code, _, stderr := e.lh(nil, "run", "job", "--", "touch", marker); code != 0 || !fileExists(marker) {
		t.Fatalf("a run after the hold ended exited %d; stderr: %s", code, stderr)
	}
}

// Bad --min-hold and --tick values, and either with --slots, --read or
// --write, are usage errors naming the flag; the command does not run.
func TestRunHoldRefused(t *testing.T) {
	e := newEnv(t)
	marker := filepath.Join(e.dir, "ran")
	for _, tc := range []struct {
		args []string
		flag string
	}{
		{[]string{"--min-hold", "0"}, "--min-hold"},
		{[]string{"--min-hold", "-1s"}, "--min-hold"},
		{[]string{"--min-hold", "25h"}, "--min-hold"},
		{[]string{"--min-hold", "soon"}, "min-hold"},
		{[]string{"--tick", "0"}, "--tick"},
		{[]string{"--tick", "-1h"}, "--tick"},
		{[]string{"--tick", "500ms"}, "--tick"},
		{[]string{"--tick", "169h"}, "--tick"},
		{[]string{"--tick", "NaN"}, "tick"},
		{[]string{"--tick", "1h", "--slots", "2"}, "--slots"},
		{[]string{"--min-hold", "1m", "--read"}, "--read"},
		{[]string{"--tick", "1h", "--write"}, "--write"},
		{[]string{"--tick", "1h", "--key", strings.Repeat("k", 1020)}, "longer than 1024"},
	} {
		args := append([]string{"run"}, tc.args...)
		if !slices.Contains(tc.args, "--key") {
			args = append(args, "job")
		}
		args = append(args, "--", "touch", marker)
		code, _, stderr := e.lh(nil, args...)
		if code != exitUsage || !strings.Contains(stderr, tc.flag) {
			t.Errorf("run %s exited %d, want %d naming %s; stderr: %s", strings.Join(tc.args, " "), code, exitUsage, tc.flag, stderr)
		}
	}
	if fileExists(marker) {
		t.Error("a refused run ran its command")
	}
}

func TestPlanHold(t *testing.T) {
	at := func(s string) time.Time {
		tt, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			t.Fatal(err)
		}
		return tt
	}
	got := at("2026-11-27T15:00:20Z")
	tests := []struct {
		name          string
		f             runFlags
		now           string
		key           string
		minHold, wait time.Duration
		end, holdEnd  string // "" for zero
	}{
		{"plain", runFlags{key: "k", wait: time.Minute}, "2026-11-27T15:00:00Z", "k", 0, time.Minute, "", ""},
		{"min-hold", runFlags{key: "k", minHold: time.Hour}, "2026-11-27T15:00:00Z", "k", time.Hour, 0, "", "2026-11-27T16:00:20Z"},
		{"tick", runFlags{key: "k", tick: time.Hour}, "2026-11-27T15:00:10Z", "k/2026-11-27T15:00:00Z", 29*time.Minute + 50*time.Second, 0, "2026-11-27T15:30:00Z", "2026-11-27T15:30:00Z"},
		{"tick early", runFlags{key: "k", tick: time.Hour}, "2026-11-27T14:59:50Z", "k/2026-11-27T15:00:00Z", 30*time.Minute + 10*time.Second, 0, "2026-11-27T15:30:00Z", "2026-11-27T15:30:00Z"},
		{"tick wait capped", runFlags{key: "k", tick: time.Hour, wait: leasehold.WaitForever}, "2026-11-27T15:00:10Z", "k/2026-11-27T15:00:00Z", 29*time.Minute + 50*time.Second, 29*time.Minute + 50*time.Second, "2026-11-27T15:30:00Z", "2026-11-27T15:30:00Z"},
		{"tick short wait", runFlags{key: "k", tick: time.Hour, wait: time.Minute}, "2026-11-27T15:00:10Z", "k/2026-11-27T15:00:00Z", 29*time.Minute + 50*time.Second, time.Minute, "2026-11-27T15:30:00Z", "2026-11-27T15:30:00Z"},
		{"tick and min-hold", runFlags{key: "k", tick: time.Hour, minHold: time.Minute}, "2026-11-27T15:00:10Z", "k/2026-11-27T15:00:00Z", time.Minute, 0, "2026-11-27T15:30:00Z", "2026-11-27T15:01:20Z"},
		{"week tick capped at MaxTTL", runFlags{key: "k", tick: 7 * 24 * time.Hour}, "2026-11-27T15:00:10Z", "k/2026-11-30T00:00:00Z", leasehold.MaxTTL, 0, "2026-12-03T12:00:00Z", "2026-11-28T15:00:20Z"},
	}
	for _, tc := range tests {
		p := tc.f.planHold(at(tc.now))
		end, holdEnd := "", ""
		if !p.end.IsZero() {
			end = p.end.UTC().Format(time.RFC3339)
		}
		if he := p.holdEnd(tc.f, got); !he.IsZero() {
			holdEnd = he.UTC().Format(time.RFC3339)
		}
		if p.key != tc.key || p.opts.MinHold != tc.minHold || p.opts.Wait != tc.wait || end != tc.end || holdEnd != tc.holdEnd {
			t.Errorf("%s: planHold = key %q, MinHold %s, Wait %s, end %q, holdEnd %q; want %q, %s, %s, %q, %q",
				tc.name, p.key, p.opts.MinHold, p.opts.Wait, end, holdEnd, tc.key, tc.minHold, tc.wait, tc.end, tc.holdEnd)
		}
	}
}

// A command that cannot be started did not run: run exits 127 and frees
// the key at once, whatever --min-hold or --tick say, so that another node
// may run the job.
func TestRunHoldNotWhenCommandMissing(t *testing.T) {
	e := newEnv(t)
	for _, hold := range [][]string{{"--min-hold", "1h"}, {"--tick", "24h"}} {
		args := append(append([]string{"run", "job"}, hold...), "--", filepath.Join(e.dir, "no-such-command"))
		code, _, stderr := e.lh(nil, args...)
		if code != exitNotFound || strings.Contains(stderr, "holding") {
			t.Fatalf("run %s of a missing command exited %d, want %d without holding on; stderr: %s", hold[0], code, exitNotFound, stderr)
		}
	}
	e.checkFree(t, "job")
	e.checkFree(t, leasehold.TickKey("job", time.Now(), 24*time.Hour))
}
