package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The CLI as a shell user meets it: eval, exit statuses, the key first,
// --wait forever, JSON errors, and a status that leaves no trace.

// eval "$(leasehold acquire ...)" leaves the variables exported, so that
// renew and release, run next by the same shell, need no flags.
func TestEvalExportsTheGrant(t *testing.T) {
	e := newEnv(t)
	script := `set -e
eval "$("$LH" acquire jobs/eval --ttl 30s)"
"$LH" renew --ttl 30s
"$LH" release
echo "done $LEASEHOLD_KEY $LEASEHOLD_TOKEN"`
	cmd := exec.Command("sh", "-c", script)
	cmd.Env = e.environ("LH=" + binary)
	cmd.Dir = e.dir
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "done jobs/eval 1") {
		t.Fatalf("eval, renew, release in one shell: %v\n%s", err, out)
	}
	e.checkFree(t, "jobs/eval")
}

// status on an embedded store that does not exist yet creates neither the
// file nor its folders.
func TestStatusCreatesNothing(t *testing.T) {
	e := newEnv(t)
	dir := filepath.Join(e.dir, "not", "yet")
	e.store = "sqlite://" + filepath.Join(dir, "leases.db")
	if code, out, stderr := e.lh(nil, "status"); code != 0 || strings.Count(out, "\n") != 1 {
		t.Fatalf("status exited %d, output %q: %s", code, out, stderr)
	}
	code, out, stderr := e.lh(nil, "status", "k", "--json")
	if code != 0 || strings.TrimSpace(out) != `{"key":"k","held":false}` {
		t.Fatalf("status k --json exited %d, output %q: %s", code, out, stderr)
	}
	if _, err := os.Stat(filepath.Join(e.dir, "not")); !os.IsNotExist(err) {
		t.Fatalf("status created %s (stat: %v)", dir, err)
	}
	// Once a lease was taken, status reads the file.
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := e.lh(nil, "acquire", "k"); code != 0 {
		t.Fatalf("acquire exited %d: %s", code, stderr)
	}
	if code, out, _ := e.lh(nil, "status", "k", "--json"); code != 0 || !strings.Contains(out, `"held":true`) {
		t.Fatalf("status after acquire exited %d: %s", code, out)
	}
}

// A signal that ends a wait for the key exits 128+N, as the help says: 143
// for SIGTERM, 130 for SIGINT.
func TestSignalWhileWaitingExitStatus(t *testing.T) {
	e := newEnv(t)
	if code, _, stderr := e.lh(nil, "acquire", "busy", "--ttl", "60s"); code != 0 {
		t.Fatalf("acquire exited %d: %s", code, stderr)
	}
	for _, c := range []struct {
		sig  syscall.Signal
		want int
	}{{syscall.SIGTERM, 143}, {syscall.SIGINT, 130}} {
		// A signal that comes before leasehold listens kills it with no
		// message; then try again, later.
		for attempt := 1; ; attempt++ {
			p := e.start(nil, "acquire", "busy", "--wait", "forever")
			time.Sleep(time.Duration(attempt) * 200 * time.Millisecond)
			if err := p.cmd.Process.Signal(c.sig); err != nil {
				t.Fatal(err)
			}
			code := p.wait(t, 30*time.Second)
			stderr := p.stderr.String()
			if stderr == "" && code == c.want && attempt < 5 {
				continue
			}
			// The signal is named as kill(1) names it: "interrupted by
			// SIGINT", not "interrupted by interrupt".
			if code != c.want || !strings.Contains(stderr, "interrupted by "+signalName(c.sig)+" ") || !strings.HasPrefix(signalName(c.sig), "SIG") {
				t.Fatalf("%v while waiting: exit %d, want %d; stderr %q", c.sig, code, c.want, stderr)
			}
			break
		}
	}
	if !strings.Contains(usageText, "143 for") {
		t.Error("the usage text does not give SIGTERM's exit status")
	}
}

// A store URL wrong in any part is bad usage, exit 2, like other usage
// errors, and contacts nothing.
func TestBadStoreURLExitsTwo(t *testing.T) {
	e := newEnv(t)
	for _, u := range []string{
		"nosuch://x", "etcd://", "etcd://127.0.0.1", "redis://127.0.0.1:notaport/0",
		"redlock://127.0.0.1:1,127.0.0.1/0", "postgres://u@127.0.0.1/db?mode=bogus", "memory://x",
		"consul://", "consul://127.0.0.1:8500?tokn=t",
	} {
		code, _, stderr := e.lh(nil, "acquire", "k", "--store", u)
		if code != exitUsage || !strings.Contains(stderr, "store URL") {
			t.Errorf("acquire --store %q exited %d, want %d; stderr %q", u, code, exitUsage, stderr)
		}
	}
}

// --wait forever waits until the holder lets go.
func TestWaitForever(t *testing.T) {
	e := newEnv(t)
	code, out, stderr := e.lh(nil, "acquire", "k", "--ttl", "60s", "--json")
	if code != 0 {
		t.Fatalf("acquire exited %d: %s", code, stderr)
	}
	var g grantJSON
	if err := json.Unmarshal([]byte(out), &g); err != nil {
		t.Fatal(err)
	}
	waiter := e.start(nil, "acquire", "k", "--wait", "forever", "--json")
	if code, _, stderr := e.lh([]string{"LEASEHOLD_OWNER=" + g.Owner, "LEASEHOLD_TOKEN=" + jsonNumber(g.Token)}, "release", "k"); code != 0 {
		t.Fatalf("release exited %d: %s", code, stderr)
	}
	if code := waiter.wait(t, 30*time.Second); code != 0 {
		t.Fatalf("acquire --wait forever exited %d: %s", code, waiter.stderr.String())
	}
	if code, _, stderr := e.lh(nil, "acquire", "k2", "--wait", "sometime"); code != exitUsage || !strings.Contains(stderr, `"forever"`) {
		t.Fatalf("--wait sometime exited %d: %s", code, stderr)
	}
}

// The key may come first, as flock, consul lock and etcdctl lock take it
// (after the flags: TestFlagsBeforeKeyRun).
func TestKeyFirst(t *testing.T) {
	e := newEnv(t)
	code, out, stderr := e.lh(nil, "run", "jobs/first", "--ttl", "30s", "--", "sh", "-c", `echo "$LEASEHOLD_KEY $LEASEHOLD_TOKEN"`)
	if code != 0 || strings.TrimSpace(out) != "jobs/first 1" {
		t.Fatalf("run KEY -- COMMAND exited %d, output %q: %s", code, out, stderr)
	}
	if code, _, stderr := e.lh(nil, "run", "jobs/first", "--key", "other", "--", "true"); code != exitUsage || !strings.Contains(stderr, "given twice") {
		t.Fatalf("two different keys: exit %d: %s", code, stderr)
	}
}

// With --json, errors are one line of JSON on stderr, with the exit status
// and, when the key is held, its holder.
func TestJSONErrors(t *testing.T) {
	e := newEnv(t)
	if code, _, stderr := e.lh(nil, "acquire", "k", "--ttl", "60s", "--label", "first"); code != 0 {
		t.Fatalf("acquire exited %d: %s", code, stderr)
	}
	code, _, stderr := e.lh(nil, "acquire", "k", "--json")
	var held errorJSON
	if err := json.Unmarshal([]byte(stderr), &held); err != nil || code != exitHeld || held.Exit != exitHeld || held.Holder == nil || held.Holder.Label != "first" {
		t.Fatalf("held: exit %d, stderr %q (%v)", code, stderr, err)
	}
	// The same on every command but help: run and elect too.
	code, out, stderr := e.lh(nil, "run", "k", "--json", "--", "echo", "ran")
	if err := json.Unmarshal([]byte(stderr), &held); err != nil || code != exitHeld || held.Command != "run" || held.Holder == nil || held.Holder.Label != "first" || out != "" {
		t.Fatalf("run --json on a held key: exit %d, stdout %q, stderr %q (%v)", code, out, stderr, err)
	}
	for _, args := range [][]string{
		{"acquire", "k", "--json", "--bogus"},
		{"acquire", "--json", "--key", ""},
		{"status", "--json", "--key", "k", "--prefix", "p"},
		{"acquire", "k", "--json", "--store", "etcd://"},
		{"run", "--bogus", "k", "--json", "--", "true"},
		{"run", "k", "--json", "--ttl", "0s", "--", "true"},
		{"elect", "--json", "k", "--grace", "-1s", "--", "true"},
		{"renew", "k", "--json", "--owner", "o"},
		{"release", "--json", "k", "--token", "x"},
		{"observe", "--json", ""},
		{"migrate", "--json", "--store", "nosuch://x"},
		{"bench", "--json", "--clients", "0"},
		{"version", "--json", "extra"},
	} {
		code, _, stderr := e.lh(nil, args...)
		var bad errorJSON
		if err := json.Unmarshal([]byte(stderr), &bad); err != nil || code != exitUsage || bad.Exit != exitUsage || bad.Error == "" || bad.Command != args[0] {
			t.Errorf("%v: exit %d, stderr %q (%v)", args, code, stderr, err)
		}
	}
}

func jsonNumber(n uint64) string {
	b, _ := json.Marshal(n)
	return string(b)
}

// $LEASEHOLD_LOG routes the lease's events and the drivers' own lines to
// stderr as slog text; unset, a successful run prints nothing there; a bad
// value is a usage error.
func TestLogEnv(t *testing.T) {
	e := newEnv(t)
	code, _, stderr := e.lh([]string{"LEASEHOLD_LOG=debug"}, "run", "jobs/log", "--", "true")
	for _, want := range []string{`level=DEBUG msg="lease acquire" op=acquire key=jobs/log token=1`, `msg="lease release" op=release key=jobs/log token=1`} {
		if code != 0 || !strings.Contains(stderr, want) {
			t.Errorf("LEASEHOLD_LOG=debug run exited %d; stderr lacks %q:\n%s", code, want, stderr)
		}
	}
	if code, _, stderr := e.lh(nil, "run", "jobs/log", "--", "true"); code != 0 || stderr != "" {
		t.Errorf("run without LEASEHOLD_LOG exited %d, stderr %q", code, stderr)
	}
	if code, _, stderr := e.lh([]string{"LEASEHOLD_LOG=loud"}, "run", "jobs/log", "--", "true"); code != 2 || !strings.Contains(stderr, `LEASEHOLD_LOG="loud"`) {
		t.Errorf("LEASEHOLD_LOG=loud exited %d: %s", code, stderr)
	}
	// A dead Redis: go-redis's own dial failures reach the log.
	code, _, stderr = e.lh([]string{"LEASEHOLD_LOG=warn"}, "status", "k", "--store", "redis://127.0.0.1:1")
	if code != 1 || !strings.Contains(stderr, "level=WARN") || !strings.Contains(stderr, "driver=go-redis") {
		t.Errorf("status on a dead redis with LEASEHOLD_LOG=warn exited %d:\n%s", code, stderr)
	}
}
