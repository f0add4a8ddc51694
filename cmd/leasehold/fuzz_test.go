package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// fuzzCommands are the commands FuzzArgs runs: those whose flags, once
// parsed, run nothing outside this process (run and elect only without
// "--", so their command never starts).
var fuzzCommands = []string{"run", "elect", "acquire", "renew", "release", "status", "help", "version"}

// FuzzArgs runs the CLI in process with fuzzed arguments (NUL-separated)
// for each command, on a fresh memory store. Properties: no panic; a
// documented exit status; a usage error (2) starts with the command on
// stderr and, for a flag's bad value or an unknown flag, names the flag as
// it was written; a failed acquire prints the statement that stops eval.
// And flags go anywhere: a command line that parses parses the same with
// its first argument moved to the end (the key after the flags).
func FuzzArgs(f *testing.F) {
	f.Setenv("LEASEHOLD_STORE", "memory://")
	f.Setenv("XDG_STATE_HOME", f.TempDir())
	for _, name := range []string{"LEASEHOLD_KEY", "LEASEHOLD_OWNER", "LEASEHOLD_TOKEN"} {
		f.Setenv(name, "")
	}
	for _, s := range []string{
		"k\x00--ttl\x001s", "--key\x00k\x00--ttl\x00-1s", "--ttl\x001s\x00k", "k\x00--wait\x00forever",
		"k\x00--grace\x0010s", "--key=k\x00--json", "--bogus", "-h", "k\x00--owner\x00o\x00--token\x00007",
		"--prefix\x00p\x00--json", "k\x00--key\x00other", "--json=maybe", "k\x00--ttl\x0015", "\x00",
		"--ttl\x005s\x00k\x00--\x00true", "--json\x00k\x00--wait=1s", "k\x00--label\x00-x\x00--ttl=2s", "-json\x00--\x00-k",
		"k\x00--ttl", "--bogus=1\x00k", "---ttl\x001s", "-\x00k", "\x00--key\x00\x00--owner=o",
		"k\x00--token-file\x00/nonexistent.token", "--token-file=\x00k\x00--json",
	} {
		for i := range fuzzCommands {
			f.Add(uint8(i), s)
		}
	}
	f.Fuzz(func(t *testing.T, which uint8, joined string) {
		cmd := fuzzCommands[int(which)%len(fuzzCommands)]
		args := strings.Split(joined, "\x00")
		checkMoved(t, cmd, args) // parsing only: runs nothing
		if strings.Contains(joined, "store") || ((cmd == "run" || cmd == "elect") && slices.Contains(args, "--")) {
			return // another store, or a command to start: not what this target runs
		}
		var stdout, stderr bytes.Buffer
		a := &app{stdin: os.Stdin, stdout: &stdout, stderr: &stderr}
		code := a.main(append([]string{cmd}, args...))
		checkArgsResult(t, cmd, args, code, stdout.String(), stderr.String())
	})
}

// checkMoved checks that when args parse for cmd, they parse the same with
// the first argument, if it is not a flag, moved to the end, where it still
// comes before any "--": the same flags set, to the same values, and the
// same command after "--".
func checkMoved(t *testing.T, cmd string, args []string) {
	t.Helper()
	dashes := slices.Index(args, "--")
	if cmd == "help" || len(args) < 2 || strings.HasPrefix(args[0], "-") || dashes == 0 {
		return
	}
	end := len(args)
	if dashes > 0 {
		end = dashes
	}
	moved := slices.Concat(args[1:end], args[:1], args[end:])
	fs, fsMoved := flagSet(t, cmd), flagSet(t, cmd)
	c, err := parseLine(fs, cmd, args)
	if err != nil {
		return
	}
	cm, err := parseLine(fsMoved, cmd, moved)
	if err != nil {
		t.Fatalf("leasehold %s %q parses, but %q does not: %v", cmd, args, moved, err)
	}
	if got, want := setFlags(fsMoved), setFlags(fs); got != want || !slices.Equal(cm.command, c.command) || cm.dashes != c.dashes {
		t.Fatalf("leasehold %s %q gives %s %q; %q gives %s %q", cmd, args, want, c.command, moved, got, cm.command)
	}
}

// setFlags lists the flags set in fs with their values.
func setFlags(fs *flag.FlagSet) string {
	var out []string
	fs.Visit(func(f *flag.Flag) { out = append(out, "--"+f.Name+"="+strconv.Quote(f.Value.String())) })
	return strings.Join(out, " ")
}

// flagSet returns a new flag set of cmd, as the command defines it.
func flagSet(t testing.TB, cmd string) *flag.FlagSet {
	t.Helper()
	var got *flag.FlagSet
	a := &app{stdin: os.Stdin, stdout: io.Discard, stderr: io.Discard, flagSets: func(c string, fs *flag.FlagSet) {
		if c != cmd {
			t.Fatalf("leasehold %s parsed the flags of %s", cmd, c)
		}
		got = fs
	}}
	a.main([]string{cmd})
	if got == nil {
		t.Fatalf("leasehold %s parsed no flags", cmd)
	}
	return got
}

// checkArgsResult checks FuzzArgs's properties for one run.
func checkArgsResult(t *testing.T, cmd string, args []string, code int, stdout, stderr string) {
	t.Helper()
	if !slices.Contains([]int{exitOK, exitFailure, exitUsage, exitHeld, exitLost}, code) {
		t.Fatalf("leasehold %s %q exited %d; stderr %q", cmd, args, code, stderr)
	}
	json := wantsJSON(args)
	if code == exitUsage && !json {
		first, _, _ := strings.Cut(stderr, "\n")
		if !strings.HasPrefix(first, "leasehold "+cmd) && !strings.HasPrefix(first, "leasehold: ") {
			t.Fatalf("leasehold %s %q: usage error %q does not start with the command", cmd, args, stderr)
		}
		for _, marker := range []string{"unknown flag ", "invalid value ", "bad flag syntax: "} {
			if _, named, ok := strings.Cut(first, marker); ok && !slices.ContainsFunc(args, func(arg string) bool {
				written, _, _ := strings.Cut(arg, "=")
				return strings.HasPrefix(arg, "-") && (strings.Contains(named, showFlag(written)) || strings.Contains(named, showFlag(arg)))
			}) {
				t.Fatalf("leasehold %s %q: %q does not name a flag as it was written", cmd, args, first)
			}
		}
	}
	if cmd == "acquire" && code != exitOK && !json {
		want := fmt.Sprintf("case $- in *i*) false ;; *) exit %d ;; esac\n", code)
		if stdout != want {
			t.Fatalf("leasehold acquire %q exited %d and printed %q; want %q, which stops eval", args, code, stdout, want)
		}
	}
}

// FuzzParseToken checks --token (and LEASEHOLD_TOKEN) parsing: no panic; an
// accepted token is positive and round-trips through its decimal form; a
// refusal is a usage error that quotes the input.
func FuzzParseToken(f *testing.F) {
	for _, s := range []string{"1", "007", " 42 ", "0", "-1", "+1", "18446744073709551615", "18446744073709551616", "1e3", "0x10", "", "١٢"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		tok, err := parseToken(s)
		if err != nil {
			if exitCode(err) != exitUsage || (s != "" && !strings.Contains(err.Error(), strconv.Quote(s))) || !strings.Contains(err.Error(), "token") {
				t.Fatalf("parseToken(%q): %v; want a usage error quoting the input", s, err)
			}
			return
		}
		if tok == 0 {
			t.Fatalf("parseToken(%q) accepted token 0", s)
		}
		back, err := parseToken(strconv.FormatUint(tok, 10))
		if err != nil || back != tok {
			t.Fatalf("parseToken(%q) = %d, which does not round-trip: %d, %v", s, tok, back, err)
		}
		if d := strings.TrimLeft(strings.TrimSpace(s), "0"); d != strconv.FormatUint(tok, 10) {
			t.Fatalf("parseToken(%q) = %d: not the input's digits", s, tok)
		}
	})
}

// FuzzWatchdogLines feeds the watchdog's line handling fuzzed lines from
// run (then, optionally, the end of its stdin), with signals recorded
// instead of sent. Properties: no panic; a signal only ever goes to the
// group a guard line named, never to a group id below 2 (kill(-1) would
// reach every process); the deadline never moves earlier, nor at all once
// termination has begun; SIGKILL comes after SIGTERM unless run went away;
// the watchdog reports on stdout only what it sent; after "done" nothing.
func FuzzWatchdogLines(f *testing.F) {
	for _, s := range []string{
		"guard 4242 1\n", "guard 4242 9223372036854775807\ndeadline 1\ndone\n", "guard 1 0\n", "guard -5 0\n",
		"guard 4242 -9223372036854775808\n", "deadline 5\nguard 4242 10\n", "done\nguard 4242 0\n", "guard 4242  1 \n",
		"guard 4242 9223372036854775807\ndeadline 9223372036854775807\n",
	} {
		f.Add(int64(2e9), false, s)
		f.Add(int64(0), true, s)
	}
	f.Fuzz(func(t *testing.T, grace int64, eof bool, input string) {
		if grace < 0 {
			return // watchdogMain refuses it
		}
		var stdout, stderr bytes.Buffer
		var sent []syscall.Signal
		g := guardState{grace: grace, stdout: &stdout, stderr: &stderr}
		g.kill = func(pgid int, s syscall.Signal) {
			if pgid < 2 || pgid != g.pgid {
				t.Fatalf("signal %v to group %d (guarding %d) on %q", s, pgid, g.pgid, input)
			}
			if s == syscall.SIGKILL && !slices.Contains(sent, syscall.SIGTERM) && !eof {
				t.Fatalf("SIGKILL before SIGTERM on %q", input)
			}
			sent = append(sent, s)
		}
		done := false
		for _, line := range strings.Split(input, "\n") {
			before, terminating := g.deadline, g.terminating
			guardLine := strings.HasPrefix(strings.TrimSpace(line), "guard")
			if done = g.apply(line); done {
				break
			}
			if !guardLine && (g.deadline < before || (terminating && g.deadline != before)) {
				t.Fatalf("line %q moved the deadline from %d to %d (terminating %v)", line, before, g.deadline, terminating)
			}
		}
		n := len(sent)
		if !done && eof {
			g.parentGone()
		}
		var reports []string
		for _, s := range sent[:n] {
			reports = append(reports, map[syscall.Signal]string{syscall.SIGTERM: "term", syscall.SIGKILL: "kill"}[s])
		}
		if got := strings.Fields(stdout.String()); !slices.Equal(got, reports) {
			t.Fatalf("stdout %q, but sent %v, on %q", stdout.String(), sent, input)
		}
	})
}
