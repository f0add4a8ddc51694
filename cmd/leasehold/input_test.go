package main

import (
	"bytes"
	"encoding/json"
	"os"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"testing"

	"github.com/leasehold-go/leasehold/storeurl"
)

// runApp runs leasehold in process.
func runApp(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	a := &app{stdin: os.Stdin, stdout: &stdout, stderr: &stderr}
	code := a.main(args)
	return code, stdout.String(), stderr.String()
}

// Bad input gets exit status 2 and an error that names the problem, before
// any store is touched.
func TestBadInput(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	t.Setenv("LEASEHOLD_STORE", "")
	for _, name := range []string{"LEASEHOLD_KEY", "LEASEHOLD_OWNER", "LEASEHOLD_TOKEN"} {
		t.Setenv(name, "")
	}
	long := strings.Repeat("k", 1025)
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"nosuch"}, `unknown command "nosuch"`},
		{[]string{"help", "nosuch"}, `unknown command "nosuch"`},
		{[]string{"run", "--bogus", "x"}, "unknown flag --bogus"},
		{[]string{"run", "k", "-bogus=1", "--", "true"}, "unknown flag -bogus"},
		{[]string{"acquire", "k", "--ttl"}, "flag --ttl needs a value"},
		{[]string{"acquire", "k", "--json=maybe"}, `invalid value "maybe" for flag --json`},
		{[]string{"acquire", "k", "---ttl", "1s"}, `bad flag syntax: "---ttl"`},
		{[]string{"run", "", "--", "true"}, "empty key"},
		{[]string{"acquire", "--key=", "--ttl", "1s"}, "empty key"},
		{[]string{"release", "", "--owner", "o", "--token", "1"}, "empty key"},
		{[]string{"run", "--key", "k", "echo", "hi"}, "missing -- before the command"},
		{[]string{"run", "--key", "k"}, "nothing to run"},
		{[]string{"run", "--key", "k", "--"}, "no command after --"},
		{[]string{"run", "--", "true"}, "the key is required"},
		{[]string{"run", "--ttl", "1s", "k", "j", "--", "true"}, `unexpected argument "j"`},
		{[]string{"run", "--key", "", "--", "true"}, "empty key"},
		{[]string{"run", "--key", "a\x00b", "--", "true"}, "invalid key"},
		{[]string{"run", "--key", "a\nb", "--", "true"}, "control byte"},
		{[]string{"run", "--key", long, "--", "true"}, "longer than 1024"},
		{[]string{"run", "--key", "k", "--ttl", "0", "--", "true"}, "not positive"},
		{[]string{"run", "--key", "k", "--ttl", "-1s", "--", "true"}, "not positive"},
		{[]string{"run", "--key", "k", "--ttl", "25h", "--", "true"}, "above the maximum"},
		{[]string{"run", "--key", "k", "--ttl", "15", "--", "true"}, "not a duration"},
		{[]string{"run", "--key", "k", "--wait", "-1s", "--", "true"}, "negative"},
		{[]string{"run", "--key", "k", "--grace", "-1s", "--", "true"}, "negative"},
		// SIGKILL must land by the holder's deadline, and SIGTERM must not go
		// out before a hung first renewal and a retry have ended: at most
		// (holdFor(TTL) - 1.1 x TTL/3) / 4.
		{[]string{"run", "--key", "k", "--grace", "10s", "--", "true"}, "--grace 10s is longer than --ttl 15s allows (at most 2.336s)"},
		{[]string{"run", "--key", "k", "--ttl", "3s", "--grace", "1s", "--", "true"}, "--grace 1s is longer than --ttl 3s allows (at most 466ms)"},
		{[]string{"acquire", "--key", "k", "--ttl", "1ms"}, "below the sqlite store's minimum"},
		{[]string{"run", "--key", "k", "--ttl", "1ms", "--", "true"}, "--ttl 1ms is too short for run"},
		{[]string{"acquire"}, "the key is required"},
		{[]string{"acquire", "--key", "k", "extra"}, `the key is given twice: "extra" as an argument and "k" by --key`},
		{[]string{"acquire", "k", "extra", "--ttl", "1s"}, `unexpected argument "extra"`},
		{[]string{"acquire", "--key", "k", "--wait", "-5s"}, "negative"},
		{[]string{"acquire", "--key", "k", "--ttl", "0s"}, "not positive"},
		{[]string{"renew", "--key", "k", "--token", "1"}, "--owner is required"},
		{[]string{"renew", "--key", "k", "--owner", "o"}, "--token is required"},
		{[]string{"renew", "--key", "k", "--owner", "o", "--token", "x1"}, `token "x1" is not a positive decimal number`},
		{[]string{"renew", "--key", "k", "--owner", "o", "--token", "1", "--ttl", "0"}, "not positive"},
		{[]string{"release", "--owner", "o", "--token", "1"}, "the key is required"},
		{[]string{"release", "--key", "k", "--owner", "o", "--token", "0"}, "not a positive decimal number"},
		{[]string{"status", "--key", "k", "--prefix", "p"}, "not both"},
		{[]string{"status", "--key", ""}, "empty key"},
		{[]string{"status", "k", "--prefix", "p"}, "not both"},
		{[]string{"status", "--store", "mongodb://db.example/x"}, `unknown store URL scheme "mongodb"`},
		{[]string{"status", "--store", "/var/lib/leases.db"}, "sqlite:///var/lib/leases.db"},
		{[]string{"status", "--store", "sqlite://relative/x.db"}, `host "relative"`},
	}
	for _, c := range cases {
		code, _, stderr := runApp(t, c.args...)
		if code != exitUsage {
			t.Errorf("leasehold %q exited %d, want %d; stderr: %s", c.args, code, exitUsage, stderr)
			continue
		}
		if !strings.Contains(stderr, c.want) {
			t.Errorf("leasehold %q: stderr %q does not contain %q", c.args, stderr, c.want)
		}
	}
	if entries, _ := os.ReadDir(os.Getenv("XDG_STATE_HOME")); len(entries) > 1 {
		t.Errorf("bad input created files in the state directory: %v", entries)
	}
}

// An unknown scheme's error lists the supported schemes, also through
// LEASEHOLD_STORE.
func TestUnknownSchemeListsSchemes(t *testing.T) {
	t.Setenv("LEASEHOLD_STORE", "hazelcast://localhost:5701")
	code, _, stderr := runApp(t, "status", "--key", "k")
	if code != exitUsage {
		t.Fatalf("exit %d, want %d: %s", code, exitUsage, stderr)
	}
	for _, s := range storeurl.Schemes() {
		if !strings.Contains(stderr, s) {
			t.Errorf("stderr %q does not list scheme %q", stderr, s)
		}
	}
}

func TestHelp(t *testing.T) {
	code, out, _ := runApp(t, "help")
	if code != 0 || !strings.Contains(out, "leasehold run") || !strings.Contains(out, "75") {
		t.Fatalf("help exited %d:\n%s", code, out)
	}
	code, _, stderr := runApp(t)
	if code != exitUsage || !strings.Contains(stderr, "Usage:") {
		t.Fatalf("no arguments: exit %d, stderr:\n%s", code, stderr)
	}
	for _, cmd := range commands {
		code, out, _ := runApp(t, "help", cmd)
		if code != 0 || !strings.Contains(out, "leasehold "+cmd) {
			t.Errorf("help %s exited %d:\n%s", cmd, code, out)
		}
		if cmd == "help" {
			continue
		}
		code, out, _ = runApp(t, cmd, "-h")
		if code != 0 || out != commandUsage[cmd] {
			t.Errorf("%s -h exited %d:\n%s", cmd, code, out)
		}
	}
}

// The memory store keeps its grants in the process: the one-shot commands
// refuse it, naming the store and leasehold run; status still works.
func TestMemoryStoreInProcess(t *testing.T) {
	for _, args := range [][]string{
		{"acquire", "--key", "k", "--json"},
		{"renew", "--key", "k", "--owner", "0123456789abcdef0123456789abcdef", "--token", "1"},
		{"release", "--key", "k", "--owner", "0123456789abcdef0123456789abcdef", "--token", "1"},
	} {
		code, out, stderr := runApp(t, append(args, "--store", "memory://")...)
		if code != exitUsage || out != "" {
			t.Errorf("%s on memory:// exited %d with %q, want %d and nothing on stdout", args[0], code, out, exitUsage)
		}
		prefix := "leasehold " + args[0] + ":"
		if slices.Contains(args, "--json") { // the error is JSON
			prefix = `"command":"` + args[0] + `"`
		}
		for _, want := range []string{prefix, "the memory store", "leasehold run"} {
			if !strings.Contains(stderr, want) {
				t.Errorf("%s on memory://: stderr %q does not contain %q", args[0], stderr, want)
			}
		}
	}
	code, out, _ := runApp(t, "status", "--store", "memory://", "--json")
	if code != 0 || strings.TrimSpace(out) != "[]" {
		t.Fatalf("status on a fresh memory:// store exited %d: %s", code, out)
	}
}

func TestVersion(t *testing.T) {
	for _, arg := range []string{"version", "--version"} {
		code, out, stderr := runApp(t, arg)
		if code != 0 || !strings.HasPrefix(out, "leasehold ") || !strings.Contains(out, runtime.Version()) {
			t.Errorf("%s exited %d: %q %q", arg, code, out, stderr)
		}
	}
	code, out, stderr := runApp(t, "version", "--json")
	var v versionJSON
	if err := json.Unmarshal([]byte(out), &v); err != nil || code != 0 || v.Go != runtime.Version() || v.Version == "" {
		t.Errorf("version --json exited %d: %q %q (%v)", code, out, stderr, err)
	}
	if code, _, _ := runApp(t, "version", "extra"); code != exitUsage {
		t.Errorf("version with an argument exited %d, want %d", code, exitUsage)
	}
	bi := &debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Version: "v0.3.0"},
		Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "0123456789abcdef"}, {Key: "vcs.modified", Value: "true"}, {Key: "vcs.time", Value: "2026-11-23T20:00:00Z"}}}
	if got, want := buildVersion(bi).line(), "leasehold v0.3.0 0123456789ab+modified 2026-11-23T20:00:00Z go1.26.0"; got != want {
		t.Errorf("buildVersion(bi).line() = %q, want %q", got, want)
	}
}
