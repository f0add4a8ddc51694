package main

import (
	"strconv"
	"strings"
	"testing"
)

// shellCycle drives the key "nightly" of store from the shell, with extra
// in the environment: run holds it around a command that prints its token,
// a one-shot acquire takes it (labelled shell-1, with a higher token), a
// second run finds it held and says by whom, status reports the holder,
// release frees it, and a run then gets it at once (a clock-free store
// would make it wait a TTL for a lease left held).
func shellCycle(t *testing.T, e *env, extra []string, store string) {
	t.Helper()
	code, out, stderr := e.lh(extra, "run", "--store", store, "--key", "nightly", "--", "sh", "-c", `echo "token=$LEASEHOLD_TOKEN"`)
	if code != 0 || !strings.HasPrefix(out, "token=") || strings.TrimSpace(out) == "token=" {
		t.Fatalf("run exited %d, stdout %q: %s", code, out, stderr)
	}
	first, _ := strconv.ParseUint(strings.TrimSpace(strings.TrimPrefix(out, "token=")), 10, 64)
	code, out, stderr = e.lh(extra, "acquire", "--store", store, "--key", "nightly", "--label", "shell-1", "--json")
	if code != 0 {
		t.Fatalf("acquire exited %d: %s", code, stderr)
	}
	g := decode[grantJSON](t, "acquire --json", out)
	if g.Token <= first {
		t.Fatalf("acquire's token %d is not above the run's %d", g.Token, first)
	}
	code, _, stderr = e.lh(extra, "run", "--store", store, "--key", "nightly", "--", "true")
	if code != exitHeld || !strings.Contains(stderr, "shell-1") {
		t.Fatalf("run on a held key exited %d, want %d naming the holder: %s", code, exitHeld, stderr)
	}
	code, out, _ = e.lh(extra, "status", "--store", store, "--key", "nightly", "--json")
	if h := decode[holderJSON](t, "status --json", out); code != 0 || !h.Held || h.Token != g.Token || h.Label != "shell-1" || h.RemainingMS <= 0 {
		t.Fatalf("status exited %d: %+v", code, h)
	}
	code, _, stderr = e.lh(extra, "release", "--store", store, "--key", "nightly", "--owner", g.Owner, "--token", strconv.FormatUint(g.Token, 10))
	if code != 0 {
		t.Fatalf("release exited %d: %s", code, stderr)
	}
	if code, _, stderr = e.lh(extra, "run", "--store", store, "--key", "nightly", "--", "true"); code != 0 {
		t.Fatalf("run after the release exited %d: %s", code, stderr)
	}
}
