package main

import (
	"encoding/json"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestServeRefusesPlainHTTP: without TLS, leasehold serve listens only on
// a loopback address and only with --insecure-loopback; each refusal says
// what to give instead, exits 2, and opens nothing.
func TestServeRefusesPlainHTTP(t *testing.T) {
	e := newEnv(t)
	tests := []struct {
		args []string
		says string
	}{
		{[]string{"--listen", "127.0.0.1:0"}, "needs TLS"},
		{[]string{"--listen", "0.0.0.0:0", "--insecure-loopback"}, "loopback address only"},
		{[]string{"--listen", ":0", "--insecure-loopback"}, "loopback address only"},
		{[]string{"--listen", "example.com:80", "--insecure-loopback"}, "loopback address only"},
		{[]string{"--insecure-loopback"}, "--listen HOST:PORT is required"},
		{[]string{"--listen", "127.0.0.1:0", "--tls-cert", "c.pem"}, "both --tls-cert and --tls-key"},
		{[]string{"--listen", "127.0.0.1:0", "--tls-cert", "c.pem", "--tls-key", "k.pem", "--insecure-loopback"}, "not both"},
		{[]string{"--listen", "0.0.0.0:7443", "--tls-cert", "c.pem", "--tls-key", "k.pem"}, "needs --token-file"},
	}
	for _, tc := range tests {
		code, _, stderr := e.lh(nil, append([]string{"serve"}, tc.args...)...)
		if code != exitUsage || !strings.Contains(stderr, tc.says) {
			t.Errorf("serve %v exited %d: %q, want %d saying %q", tc.args, code, stderr, exitUsage, tc.says)
		}
	}
}

// TestServeRunThroughServer: leasehold serve on the embedded store, as a
// process of its own, and the shell cycle (run, acquire, a held run,
// status, release, run) through it with --store leasehold+http://...; the
// server stops on SIGTERM with exit status 0.
func TestServeRunThroughServer(t *testing.T) {
	e := newEnv(t)
	srv, ann := startServe(t, e, "--store", e.store, "--listen", "127.0.0.1:0", "--insecure-loopback")
	if !strings.HasPrefix(ann.URL, "http://127.0.0.1:") || ann.Store != "sqlite" {
		t.Fatalf("serve announced %+v", ann)
	}
	shellCycle(t, e, nil, "leasehold+"+ann.URL)
	if code, _, stderr := e.lh(nil, "acquire", "--store", "leasehold+"+ann.URL, "jobs/x", "--label", "listed"); code != 0 {
		t.Fatalf("acquire through the server exited %d: %s", code, stderr)
	}
	code, out, stderr := e.lh(nil, "status", "--store", "leasehold+"+ann.URL, "--prefix", "jobs/", "--json")
	if code != 0 || !strings.Contains(out, `"key":"jobs/x"`) || !strings.Contains(out, `"label":"listed"`) {
		t.Errorf("status --prefix through the server exited %d: %s %s", code, out, stderr)
	}
	if err := srv.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code := srv.wait(t, 30*time.Second); code != 0 {
		t.Errorf("serve exited %d after SIGTERM: %s", code, srv.stderr.String())
	}
}

// TestServeTokens: leasehold serve --token-file on the embedded store; a
// run with the token's file in the store URL works, one without a token
// is refused (401), and after the token is removed from the file and the
// server gets SIGHUP, the token is refused too.
func TestServeTokens(t *testing.T) {
	e := newEnv(t)
	tokens, client := filepath.Join(e.dir, "tokens"), filepath.Join(e.dir, "client-token")
	writeFile(t, tokens, "ci ci-token-0123456789abcdef * jobs/\n")
	writeFile(t, client, "ci-token-0123456789abcdef\n")
	srv, ann := startServe(t, e, "--store", e.store, "--listen", "127.0.0.1:0", "--insecure-loopback", "--token-file", tokens)
	withToken := "leasehold+" + ann.URL + "?token_file=" + url.QueryEscape(client)
	if code, _, stderr := e.lh(nil, "run", "--store", withToken, "jobs/a", "--", "true"); code != 0 {
		t.Fatalf("run with the token exited %d: %s", code, stderr)
	}
	if code, _, stderr := e.lh(nil, "run", "--store", withToken, "billing/a", "--", "true"); code == 0 || !strings.Contains(stderr, "may not acquire") {
		t.Errorf("run outside the token's prefix exited %d: %s", code, stderr)
	}
	if code, _, stderr := e.lh(nil, "status", "--store", "leasehold+"+ann.URL, "jobs/a"); code == 0 || !strings.Contains(stderr, "needs a bearer token") {
		t.Errorf("status without a token exited %d: %s", code, stderr)
	}
	writeFile(t, tokens, "other other-token-0123456789abcdef * *\n")
	if err := srv.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 30*time.Second, "the server to reload its tokens", func() bool {
		return strings.Contains(srv.stderr.String(), "reloaded the tokens")
	})
	if code, _, stderr := e.lh(nil, "status", "--store", withToken, "jobs/a"); code == 0 || !strings.Contains(stderr, "not one this server accepts") {
		t.Errorf("status with the revoked token exited %d: %s", code, stderr)
	}
}

// announcement is what leasehold serve --json prints once it listens.
type announcement struct{ URL, Store string }

// startServe starts leasehold serve --json with args and waits for it to
// print its URL.
func startServe(t *testing.T, e *env, args ...string) (*proc, announcement) {
	t.Helper()
	srv := e.start(nil, append([]string{"serve", "--json"}, args...)...)
	var ann announcement
	waitFor(t, 30*time.Second, "leasehold serve to print its URL", func() bool {
		line, _, ok := strings.Cut(srv.stdout.String(), "\n")
		return ok && json.Unmarshal([]byte(line), &ann) == nil
	})
	return srv, ann
}

func writeFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
}
