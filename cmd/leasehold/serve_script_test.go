package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestServeScript: scripts/serve, the README's one command, makes a
// certificate and two tokens in a folder of its own (0700), and serves
// with TLS and the tokens: the jobs token runs a command on jobs/ and is
// refused on billing/; the admin token may do both; a client without the
// certificate is refused; a second start reuses the same tokens.
func TestServeScript(t *testing.T) {
	e := newEnv(t)
	script, err := filepath.Abs("../../scripts/serve")
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(e.dir, "serve")
	extra := []string{"LEASEHOLD_CMD=" + binary, "LEASEHOLD_SERVE_DIR=" + dir, "LEASEHOLD_SERVE_LISTEN=127.0.0.1:0"}
	url := startScript(t, e, script, extra)
	if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("the script's folder: %v %v, want mode 0700", fi, err)
	}
	trust := []string{"SSL_CERT_FILE=" + filepath.Join(dir, "cert.pem")}
	jobs := "leasehold+" + url + "?token_file=" + filepath.Join(dir, "jobs.token")
	admin := "leasehold+" + url + "?token_file=" + filepath.Join(dir, "admin.token")
	for _, tc := range []struct {
		env        []string
		store, key string
		ok         bool
		says       string
	}{
		{trust, jobs, "jobs/nightly", true, ""},
		{trust, jobs, "billing/nightly", false, "may not acquire"},
		{trust, admin, "billing/nightly", true, ""},
		{[]string{"SSL_CERT_FILE=/dev/null"}, jobs, "jobs/nightly", false, "certificate"},
	} {
		code, out, stderr := e.lh(tc.env, "run", "--store", tc.store, tc.key, "--", "sh", "-c", "echo $LEASEHOLD_TOKEN")
		if tc.ok && (code != 0 || strings.TrimSpace(out) == "") {
			t.Errorf("run %s with %s exited %d: %s", tc.key, tc.store, code, stderr)
		}
		if !tc.ok && (code == 0 || !strings.Contains(stderr, tc.says)) {
			t.Errorf("run %s with %s exited %d, want a refusal saying %q: %s", tc.key, tc.store, code, tc.says, stderr)
		}
	}
	before, err := os.ReadFile(filepath.Join(dir, "tokens"))
	if err != nil {
		t.Fatal(err)
	}
	startScript(t, e, script, extra)
	if after, _ := os.ReadFile(filepath.Join(dir, "tokens")); string(after) != string(before) {
		t.Errorf("a second start changed the tokens:\n%s\nto\n%s", before, after)
	}
}

// startScript starts scripts/serve on the test's store and waits for the
// server's URL.
func startScript(t *testing.T, e *env, script string, extra []string) string {
	t.Helper()
	srv := e.startCmd(script, extra, "--json", "--store", e.store)
	var ann announcement
	waitFor(t, 60*time.Second, "scripts/serve to print its URL", func() bool {
		line, _, ok := strings.Cut(srv.stdout.String(), "\n")
		return ok && json.Unmarshal([]byte(line), &ann) == nil
	})
	if !strings.HasPrefix(ann.URL, "https://127.0.0.1:") || ann.Store != "sqlite" {
		t.Fatalf("scripts/serve announced %+v; stderr: %s", ann, srv.stderr.String())
	}
	return ann.URL
}
