package main

import (
	"strings"
	"testing"

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
	if code != 0 || stderr != "" {
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
