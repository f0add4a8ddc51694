package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
)

func decode[T any](t *testing.T, what, out string) T {
	t.Helper()
	var v T
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatalf("%s: output %q is not JSON: %v", what, out, err)
	}
	return v
}

// acquire, status, renew and release from a shell script's point of view.
func TestAcquireRenewReleaseStatus(t *testing.T) {
	e := newEnv(t)
	code, out, stderr := e.lh(nil, "acquire", "--key", "jobs/a", "--ttl", "30s", "--label", "script-1", "--json")
	if code != 0 {
		t.Fatalf("acquire exited %d: %s", code, stderr)
	}
	g := decode[grantJSON](t, "acquire --json", out)
	if g.Key != "jobs/a" || g.Token == 0 || len(g.Owner) < 32 || g.Label != "script-1" || g.TTLMS != 30000 {
		t.Fatalf("acquire --json: %+v", g)
	}
	tok := fmt.Sprint(g.Token)

	code, out, _ = e.lh(nil, "status", "--key", "jobs/a", "--json")
	h := decode[holderJSON](t, "status --key --json", out)
	if code != 0 || !h.Held || h.Token != g.Token || h.Label != "script-1" || h.RemainingMS <= 0 || h.RemainingMS > 30000 {
		t.Fatalf("status --key --json exited %d: %+v", code, h)
	}
	if strings.Contains(out, g.Owner) {
		t.Fatalf("status shows the owner id, which is the holder's secret: %s", out)
	}

	// Renew: by the owner, by flags and by the environment; a stranger is refused.
	if code, _, stderr := e.lh(nil, "renew", "--key", "jobs/a", "--owner", g.Owner, "--token", tok, "--ttl", "40s"); code != 0 {
		t.Fatalf("renew exited %d: %s", code, stderr)
	}
	if code, _, stderr := e.lh([]string{"LEASEHOLD_KEY=jobs/a", "LEASEHOLD_OWNER=" + g.Owner, "LEASEHOLD_TOKEN=" + tok}, "renew", "--ttl", "40s"); code != 0 {
		t.Fatalf("renew from the environment exited %d: %s", code, stderr)
	}
	if code, _, stderr := e.lh(nil, "renew", "--key", "jobs/a", "--owner", "0123456789abcdef0123456789abcdef", "--token", tok); code != exitLost {
		t.Fatalf("renew by another owner exited %d, want %d: %s", code, exitLost, stderr)
	}
	if code, _, stderr := e.lh(nil, "renew", "--key", "jobs/a", "--owner", g.Owner, "--token", fmt.Sprint(g.Token+1)); code != exitLost {
		t.Fatalf("renew with a wrong token exited %d, want %d: %s", code, exitLost, stderr)
	}

	// Release by a stranger is refused and harmless.
	if code, _, stderr := e.lh(nil, "release", "--key", "jobs/a", "--owner", "0123456789abcdef0123456789abcdef", "--token", tok); code != exitLost {
		t.Fatalf("release by another owner exited %d, want %d: %s", code, exitLost, stderr)
	}
	if code, _, stderr := e.lh(nil, "acquire", "--key", "jobs/a"); code != exitHeld || !strings.Contains(stderr, "script-1") {
		t.Fatalf("acquire of a held key exited %d, want %d and the holder: %s", code, exitHeld, stderr)
	}

	// Another key, for the listing.
	code, out, _ = e.lh(nil, "acquire", "--key", "jobs/b", "--ttl", "30s")
	if code != 0 || !strings.Contains(out, "export LEASEHOLD_TOKEN=1\n") || !strings.Contains(out, "export LEASEHOLD_KEY=jobs/b\n") {
		t.Fatalf("acquire exited %d, output %q", code, out)
	}
	e.lh(nil, "acquire", "--key", "other", "--ttl", "30s")
	code, out, _ = e.lh(nil, "status", "--prefix", "jobs/", "--json")
	list := decode[[]holderJSON](t, "status --prefix --json", out)
	if code != 0 || len(list) != 2 || list[0].Key != "jobs/a" || list[1].Key != "jobs/b" {
		t.Fatalf("status --prefix jobs/ --json exited %d: %s", code, out)
	}
	code, out, _ = e.lh(nil, "status")
	// The table, then a note for each holder whose acquire has exited.
	if code != 0 || !strings.Contains(out, "KEY") || !strings.Contains(out, "script-1") || strings.Count(out, "\n") != 6 || strings.Count(out, "has exited") != 2 {
		t.Fatalf("status exited %d, table:\n%s", code, out)
	}

	// Release by the owner; a second release is refused.
	if code, _, stderr := e.lh(nil, "release", "--key", "jobs/a", "--owner", g.Owner, "--token", tok); code != 0 {
		t.Fatalf("release exited %d: %s", code, stderr)
	}
	e.checkFree(t, "jobs/a")
	if code, _, stderr := e.lh(nil, "release", "--key", "jobs/a", "--owner", g.Owner, "--token", tok); code != exitLost {
		t.Fatalf("second release exited %d, want %d: %s", code, exitLost, stderr)
	}
	code, out, _ = e.lh(nil, "status", "--key", "jobs/a")
	if code != 0 || !strings.Contains(out, "(free)") {
		t.Fatalf("status of a free key exited %d:\n%s", code, out)
	}

	// The next grant's token is higher.
	code, out, _ = e.lh(nil, "acquire", "--key", "jobs/a", "--json")
	if g2 := decode[grantJSON](t, "acquire --json", out); code != 0 || g2.Token <= g.Token {
		t.Fatalf("acquire after release exited %d, token %d after %d", code, g2.Token, g.Token)
	}
}

// acquire --wait gets the key when its holder releases it.
func TestAcquireWaits(t *testing.T) {
	e := newEnv(t)
	_, out, _ := e.lh(nil, "acquire", "--key", "k", "--ttl", "30s", "--json")
	g := decode[grantJSON](t, "acquire", out)
	waiter := e.start(nil, "acquire", "--key", "k", "--wait", "20s", "--json")
	if code, _, stderr := e.lh(nil, "release", "--key", "k", "--owner", g.Owner, "--token", fmt.Sprint(g.Token)); code != 0 {
		t.Fatalf("release exited %d: %s", code, stderr)
	}
	if code := waiter.wait(t, 30*time.Second); code != 0 {
		t.Fatalf("waiting acquire exited %d: %s", code, waiter.stderr.String())
	}
	if g2 := decode[grantJSON](t, "waiting acquire", waiter.stdout.String()); g2.Token <= g.Token {
		t.Fatalf("waiting acquire got token %d after %d", g2.Token, g.Token)
	}
}

func TestMigrate(t *testing.T) {
	e := newEnv(t)
	if code, _, stderr := e.lh(nil, "migrate"); code != 0 {
		t.Fatalf("migrate of the sqlite store in LEASEHOLD_STORE exited %d: %s", code, stderr)
	}
	code, _, stderr := e.lh(nil, "migrate", "--store", "redis://127.0.0.1:1")
	if code != 0 || !strings.Contains(stderr, "nothing to do") {
		t.Fatalf("migrate of a redis store exited %d: %s", code, stderr)
	}
	code, out, stderr := e.lh(nil, "migrate", "--json")
	if m := decode[migrateJSON](t, "migrate --json", out); code != 0 || !m.Migrated {
		t.Fatalf("migrate --json of the sqlite store exited %d with %q: %s", code, out, stderr)
	}
	code, out, stderr = e.lh(nil, "migrate", "--json", "--store", "redis://127.0.0.1:1")
	if m := decode[migrateJSON](t, "migrate --json", out); code != 0 || m.Migrated || !strings.Contains(m.Note, "redis") {
		t.Fatalf("migrate --json of a redis store exited %d with %q: %s", code, out, stderr)
	}
	e.store = ""
	if code, _, stderr := e.lh(nil, "migrate"); code != exitUsage || !strings.Contains(stderr, "--store is required") {
		t.Fatalf("migrate without a store exited %d: %s", code, stderr)
	}
}
