package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// shellStepsMark comes before each block of shell steps in the README that
// TestREADMEShellSteps runs.
const shellStepsMark = "<!-- shell steps: run in bash and sh, with and without set -e, by cmd/leasehold TestREADMEShellSteps -->\n```sh\n"

// readmeShellSteps returns the README's blocks of shell steps.
func readmeShellSteps(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	var blocks []string
	for _, part := range strings.Split(string(b), shellStepsMark)[1:] {
		block, _, ok := strings.Cut(part, "```\n")
		if !ok {
			t.Fatalf("README: a shell steps block is not closed: %q", part)
		}
		blocks = append(blocks, block)
	}
	if len(blocks) == 0 {
		t.Fatalf("README: no shell steps block after %q", shellStepsMark)
	}
	return blocks
}

// The README's shell steps, exactly as written, in bash and in POSIX sh
// (dash on Debian), with and without set -e: when another process holds
// the key, the critical section (nightly-backup) does not run and the
// script exits 75; when the key is free, it runs with a token and the key
// is free afterwards.
func TestREADMEShellSteps(t *testing.T) {
	bin := t.TempDir()
	backup := "#!/bin/sh\necho \"$*\" >>\"$LHTEST_RAN\"\n"
	if err := os.WriteFile(filepath.Join(bin, "nightly-backup"), []byte(backup), 0o755); err != nil {
		t.Fatal(err)
	}
	path := "PATH=" + filepath.Dir(binary) + string(os.PathListSeparator) + bin + string(os.PathListSeparator) + os.Getenv("PATH")
	for i, block := range readmeShellSteps(t) {
		for _, shell := range []string{"bash", "sh"} {
			if _, err := exec.LookPath(shell); err != nil {
				t.Fatalf("%s: %v", shell, err)
			}
			for _, prefix := range []string{"", "set -e\n"} {
				e := newEnv(t)
				ran := filepath.Join(e.dir, "ran")
				run := func() (int, string) {
					cmd := exec.Command(shell, "-c", prefix+block)
					cmd.Env = e.environ(path, "LHTEST_RAN="+ran)
					cmd.Dir = e.dir
					out, _ := cmd.CombinedOutput()
					return cmd.ProcessState.ExitCode(), string(out)
				}
				name := shell + " block " + string(rune('1'+i)) + " " + strings.TrimSpace(prefix)
				// Free: the critical section runs with the token, and
				// release frees the key.
				if code, out := run(); code != 0 || len(readLines(t, ran)) != 1 || readLines(t, ran)[0] != "--fence 1" {
					t.Fatalf("%s, key free: exit %d, critical section ran %q; output:\n%s", name, code, readLines(t, ran), out)
				}
				e.checkFree(t, "jobs/nightly")
				// Held by another process: the critical section must not run.
				if code, _, stderr := e.lh(nil, "acquire", "jobs/nightly", "--ttl", "5m", "--label", "other"); code != 0 {
					t.Fatalf("acquire exited %d: %s", code, stderr)
				}
				code, out := run()
				if lines := readLines(t, ran); len(lines) != 1 || code != exitHeld || !strings.Contains(out, "held by other") {
					t.Errorf("%s, key held: exit %d (want %d), critical section ran %d times (want once, before); output:\n%s", name, code, exitHeld, len(lines), out)
				}
			}
		}
	}
}
