package main

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// TestBenchBadInput checks that bad input is refused with a clear error
// before any load: nothing is measured, so nothing is printed on stdout.
func TestBenchBadInput(t *testing.T) {
	e := newEnv(t)
	garbage := filepath.Join(e.dir, "garbage.db")
	if err := os.WriteFile(garbage, bytes.Repeat([]byte("not a database "), 200), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"zero duration", []string{"--store", "memory://", "--duration", "0"}, exitUsage, "--duration 0s"},
		{"negative duration", []string{"--store", "memory://", "--duration", "-1s"}, exitUsage, "positive duration"},
		{"unparsable duration", []string{"--store", "memory://", "--duration", "ten"}, exitUsage, "not a duration"},
		{"clients not a number", []string{"--store", "memory://", "--clients", "1,x"}, exitUsage, "--clients"},
		{"zero clients", []string{"--store", "memory://", "--clients", "0"}, exitUsage, "positive whole numbers"},
		{"empty clients", []string{"--store", "memory://", "--clients", ""}, exitUsage, "--clients"},
		{"bad key mode", []string{"--store", "memory://", "--keys", "cold"}, exitUsage, "--keys"},
		{"bad scale", []string{"--store", "memory://", "--scale", "1,-3"}, exitUsage, "--scale"},
		{"bad herd", []string{"--store", "memory://", "--herd", "0"}, exitUsage, "--herd"},
		{"unparsable URL", []string{"--store", "://nope"}, exitUsage, "malformed store URL"},
		{"unknown scheme", []string{"--store", "nosuch://x"}, exitUsage, "unknown store URL scheme"},
		{"name without URL", []string{"--store", "fast="}, exitUsage, "no URL"},
		{"unusable store", []string{"--store", "sqlite://" + garbage}, exitFailure, "garbage.db"},
		{"good then unusable store", []string{"--store", "memory://", "--store", "sqlite://" + garbage}, exitFailure, "garbage.db"},
		{"chart in a missing directory", []string{"--store", "memory://", "--chart", filepath.Join(e.dir, "no", "such", "c.svg")}, exitUsage, "--chart"},
		{"unreadable results", []string{"--from", filepath.Join(e.dir, "missing.jsonl")}, exitUsage, "--from"},
		{"unknown flag", []string{"--store", "memory://", "--speed", "fast"}, exitUsage, "speed"},
		{"stray argument", []string{"--store", "memory://", "now"}, exitUsage, "unexpected argument"},
		{"prims as JSON", []string{"--store", "memory://", "--prims", "--json"}, exitUsage, "--prims prints tables"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			code, stdout, stderr := e.lh(nil, append([]string{"bench"}, tc.args...)...)
			if code != tc.code || !strings.Contains(stderr, tc.want) {
				t.Errorf("exit %d, stderr %q; want exit %d and a message with %q", code, stderr, tc.code, tc.want)
			}
			if stdout != "" || strings.Contains(stderr, "cycles") {
				t.Errorf("load was sent despite the bad input: stdout %q stderr %q", stdout, stderr)
			}
			if d := time.Since(start); d > 10*time.Second {
				t.Errorf("took %s: the error came after the load", d)
			}
		})
	}
}

func TestBenchHelp(t *testing.T) {
	e := newEnv(t)
	code, stdout, _ := e.lh(nil, "bench", "-h")
	if code != exitOK || !strings.Contains(stdout, "Usage: leasehold bench --store URL") || !strings.Contains(stdout, "--clients") {
		t.Errorf("exit %d, help %q", code, stdout)
	}
	code, stdout, _ = e.lh(nil, "help")
	if code != exitOK || !strings.Contains(stdout, "leasehold bench") {
		t.Errorf("leasehold help does not list bench: %q", stdout)
	}
}

// TestBenchRun measures two stores and checks the table, the JSON lines,
// the chart and that no lease is left held.
func TestBenchRun(t *testing.T) {
	e := newEnv(t)
	chart := filepath.Join(e.dir, "out.svg")
	code, stdout, stderr := e.lh(nil, "bench", "--store", "memory://", "--store", "emb="+e.store,
		"--clients", "1,3", "--duration", "300ms", "--handoffs", "2", "--chart", chart)
	if code != exitOK {
		t.Fatalf("exit %d, stderr:\n%s", code, stderr)
	}
	for _, want := range []string{"cycles/s", "acquire p50 ms", "p90", "p99", "release p50 ms", "errors", "renewals/s", "handoff p50 ms", "memory", "emb"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("table lacks %q:\n%s", want, stdout)
		}
	}
	if got := strings.Count(stdout, "distinct"); got != 4 {
		t.Errorf("%d result rows, want 2 stores x 2 client counts:\n%s", got, stdout)
	}
	checkSVG(t, chart, "memory, 3 clients", "emb, 1 client")
	if _, out, _ := e.lh(nil, "status", "--prefix", "leasehold-bench/", "--json"); strings.TrimSpace(out) != "[]" {
		t.Errorf("leases left held after the bench: %s", out)
	}

	code, stdout, stderr = e.lh(nil, "bench", "--store", "memory://", "--clients", "2", "--duration", "200ms", "--keys", "hot", "--json")
	if code != exitOK {
		t.Fatalf("--json: exit %d, stderr:\n%s", code, stderr)
	}
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	if len(lines) != 1 {
		t.Fatalf("--json printed %d lines, want 1:\n%s", len(lines), stdout)
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(lines[0]), &m); err != nil {
		t.Fatalf("--json line is not JSON: %v: %s", err, lines[0])
	}
	for _, f := range []string{"store", "clients", "cycles_per_sec", "acquire_p50_ms", "acquire_p99_ms", "errors"} {
		if _, ok := m[f]; !ok {
			t.Errorf("--json lacks %q: %s", f, lines[0])
		}
	}
	if m["store"] != "memory" || m["clients"] != 2.0 || m["keys"] != "hot" || m["errors"] != 0.0 {
		t.Errorf("--json values: %s", lines[0])
	}

	// The saved line, with a reference, renders again without a store.
	saved := filepath.Join(e.dir, "saved.jsonl")
	ref := `{"kind":"reference","store":"Redis SET NX","ref":"quoted","acquire_low_ms":0.5,"cycles_per_sec":100000}`
	if err := os.WriteFile(saved, []byte(stdout+ref+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr = e.lh(nil, "bench", "--from", saved, "--markdown", "--chart", chart)
	if code != exitOK || !strings.Contains(stdout, "| memory |") || !strings.Contains(stdout, "Redis SET NX") {
		t.Errorf("--from: exit %d, stdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	checkSVG(t, chart, "memory, 2 clients, hot key", "Redis SET NX (quoted)")
}

// TestBenchWithoutCycles runs --scale and --herd, then --prims, without
// --clients: their own tables (and for --prims the SUMMARY lines), no
// cycles table, and no lease left held.
func TestBenchWithoutCycles(t *testing.T) {
	e := newEnv(t)
	for _, tc := range []struct {
		name string
		args []string
		want []string
	}{
		{"scale and herd", []string{"--store", e.store, "--scale", "1,100", "--probes", "10", "--herd", "2"},
			[]string{"held leases", "100", "attempts/release", "waiters"}},
		{"prims", []string{"--store", "emb=" + e.store, "--prims"},
			[]string{"semaphore-busy", "rwlock-write", "attempts per hand-off", "SUMMARY sem-busy-over-plain-emb ", "SUMMARY sem-handoff-p50-ms-emb "}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := e.lh(nil, append([]string{"bench"}, tc.args...)...)
			if code != exitOK {
				t.Fatalf("exit %d, stderr:\n%s", code, stderr)
			}
			for _, want := range tc.want {
				if !strings.Contains(stdout, want) {
					t.Errorf("output lacks %q:\n%s", want, stdout)
				}
			}
			if strings.Contains(stdout, "cycles/s  acquire") {
				t.Errorf("%v without --clients ran the cycles too:\n%s", tc.args, stdout)
			}
			if _, out, _ := e.lh(nil, "status", "--prefix", "leasehold-bench/", "--json"); strings.TrimSpace(out) != "[]" {
				t.Errorf("leases left held after the bench: %s", out)
			}
		})
	}
}

// TestBenchInterrupt sends SIGINT mid-run: the bench prints what it
// measured so far, exits 130 and leaves no lease held.
func TestBenchInterrupt(t *testing.T) {
	e := newEnv(t)
	var stdout, stderr lockedBuffer
	cmd := exec.Command(binary, "bench", "--store", e.store, "--clients", "2,4", "--duration", "1h", "--json")
	cmd.Env, cmd.Dir = e.environ(), e.dir
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	t.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-done
		done <- nil
	})
	waitFor(t, 30*time.Second, "the first progress line", func() bool {
		return strings.Contains(stderr.String(), "cycles")
	})
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	select {
	case <-done:
		done <- nil
	case <-time.After(30 * time.Second):
		t.Fatalf("bench did not stop within 30 s of SIGINT; stderr:\n%s", stderr.String())
	}
	if code := cmd.ProcessState.ExitCode(); code != exitInterrupted {
		t.Errorf("exit %d, want %d; stderr:\n%s", code, exitInterrupted, stderr.String())
	}
	out := strings.TrimSpace(stdout.String())
	var m map[string]any
	if err := json.Unmarshal([]byte(out), &m); err != nil {
		t.Fatalf("want one JSON line of what was measured, got %q: %v", out, err)
	}
	if m["partial"] != true || m["clients"] != 2.0 || m["cycles"] == 0.0 {
		t.Errorf("interrupted result: %s", out)
	}
	if !strings.Contains(stderr.String(), "interrupted") {
		t.Errorf("stderr does not say it was interrupted:\n%s", stderr.String())
	}
	if _, held, _ := e.lh(nil, "status", "--prefix", "leasehold-bench/", "--json"); strings.TrimSpace(held) != "[]" {
		t.Errorf("leases left held after the interrupt: %s", held)
	}
}

// lockedBuffer is a bytes.Buffer that a process writes to while the test
// reads it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// checkSVG checks that path holds well-formed SVG whose text has want.
func checkSVG(t *testing.T, path string, want ...string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	dec := xml.NewDecoder(bytes.NewReader(b))
	var text strings.Builder
	root := ""
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("%s is not well-formed XML: %v", path, err)
		}
		switch tk := tok.(type) {
		case xml.StartElement:
			if root == "" {
				root = tk.Name.Local
			}
		case xml.CharData:
			text.Write(tk)
		}
	}
	if root != "svg" {
		t.Errorf("%s: root element %q", path, root)
	}
	for _, w := range want {
		if !strings.Contains(text.String(), w) {
			t.Errorf("%s lacks %q", path, w)
		}
	}
}

func TestSplitStoreName(t *testing.T) {
	for _, tc := range []struct{ in, name, url string }{
		{"redis://127.0.0.1:6379/0", "", "redis://127.0.0.1:6379/0"},
		{"fast=redis://h:1/0", "fast", "redis://h:1/0"},
		{"redlock-5=redlock://a:1,b:2", "redlock-5", "redlock://a:1,b:2"},
		{"postgres://u@h/db?mode=advisory", "", "postgres://u@h/db?mode=advisory"},
		{"pg.adv=postgres://u@h/db?mode=advisory", "pg.adv", "postgres://u@h/db?mode=advisory"},
		{"=memory://", "", "=memory://"},
		{"sqlite:///tmp/a=b.db", "", "sqlite:///tmp/a=b.db"},
		{"my store=memory://", "", "my store=memory://"},
	} {
		name, url := splitStoreName(tc.in)
		if name != tc.name || url != tc.url {
			t.Errorf("splitStoreName(%q) = %q, %q; want %q, %q", tc.in, name, url, tc.name, tc.url)
		}
	}
}

func TestParseCounts(t *testing.T) {
	for _, tc := range []struct {
		in    string
		least int
		want  []int
		ok    bool
	}{
		{"1,8,64", 1, []int{1, 8, 64}, true},
		{" 1, 8 ", 1, []int{1, 8}, true},
		{"100_000", 0, []int{100000}, true},
		{"0,1", 0, []int{0, 1}, true},
		{"0", 1, nil, false},
		{"-1", 0, nil, false},
		{"", 1, nil, false},
		{"1,,2", 1, nil, false},
		{"eight", 1, nil, false},
	} {
		got, err := parseCounts("--x", tc.in, tc.least)
		if (err == nil) != tc.ok || fmt.Sprint(got) != fmt.Sprint(tc.want) {
			t.Errorf("parseCounts(%q, %d) = %v, %v", tc.in, tc.least, got, err)
		}
	}
}
