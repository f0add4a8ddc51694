package main

import (
	"net/url"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/leasehold-go/leasehold/internal/testcert"
)

// TestServeMTLS: leasehold serve --tls-client-ca with a cert: rule scoping
// the client certificate "ci" to jobs/; leasehold run through it with the
// certificate in the store URL (cert_file, key_file, ca_file) gets the
// lease and its token, is refused on billing/, and a client without a
// certificate or token is refused (401).
func TestServeMTLS(t *testing.T) {
	e := newEnv(t)
	ca := testcert.NewCA(t, "leasehold-test")
	caFile := ca.WriteCA(t, e.dir)
	cert, key := testcert.Write(t, e.dir, "server", ca.Server(t))
	clientCert, clientKey := testcert.Write(t, e.dir, "ci", ca.Client(t, "ci"))
	tokens := filepath.Join(e.dir, "tokens")
	writeFile(t, tokens, "ci cert:ci * jobs/\n")
	_, ann := startServe(t, e, "--store", e.store, "--listen", "127.0.0.1:0", "--tls-cert", cert, "--tls-key", key,
		"--tls-client-ca", caFile, "--token-file", tokens)
	q := url.Values{"cert_file": {clientCert}, "key_file": {clientKey}, "ca_file": {caFile}}
	store := "leasehold+" + ann.URL + "?" + q.Encode()
	if code, out, stderr := e.lh(nil, "run", "--store", store, "jobs/mtls", "--", "sh", "-c", "echo $LEASEHOLD_TOKEN"); code != 0 || strings.TrimSpace(out) != "1" {
		t.Fatalf("run with the client certificate exited %d, printed %q: %s", code, out, stderr)
	}
	if code, _, stderr := e.lh(nil, "run", "--store", store, "billing/mtls", "--", "true"); code == 0 || !strings.Contains(stderr, "ci may not acquire") {
		t.Errorf("run outside the certificate's prefix exited %d: %s", code, stderr)
	}
	noCert := "leasehold+" + ann.URL + "?ca_file=" + url.QueryEscape(caFile)
	if code, _, stderr := e.lh(nil, "status", "--store", noCert, "jobs/mtls"); code == 0 || !strings.Contains(stderr, "needs a bearer token") || !strings.Contains(stderr, "client certificate") {
		t.Errorf("status without a certificate or token exited %d: %s", code, stderr)
	}
}

// TestServeMTLSRefusals: --tls-client-ca needs TLS and a token file (whose
// rules say what a certificate may do), and a file with a certificate.
func TestServeMTLSRefusals(t *testing.T) {
	e := newEnv(t)
	ca := testcert.NewCA(t, "leasehold-test")
	caFile := ca.WriteCA(t, e.dir)
	cert, key := testcert.Write(t, e.dir, "server", ca.Server(t))
	tokens := filepath.Join(e.dir, "tokens")
	writeFile(t, tokens, "ci cert:ci * *\n")
	for _, tc := range []struct {
		args []string
		code int
		says string
	}{
		{[]string{"--tls-client-ca", caFile, "--insecure-loopback"}, exitUsage, "--tls-client-ca needs --tls-cert"},
		{[]string{"--tls-client-ca", caFile, "--tls-cert", cert, "--tls-key", key}, exitUsage, "and --token-file"},
		{[]string{"--tls-client-ca", tokens, "--tls-cert", cert, "--tls-key", key, "--token-file", tokens}, exitFailure, "no PEM certificate"},
	} {
		args := append([]string{"serve", "--store", e.store, "--listen", "127.0.0.1:0"}, tc.args...)
		if code, _, stderr := e.lh(nil, args...); code != tc.code || !strings.Contains(stderr, tc.says) {
			t.Errorf("serve %v exited %d: %q, want %d saying %q", tc.args, code, stderr, tc.code, tc.says)
		}
	}
}

// TestTokenFileFlag: --token-file gives the bearer token to run, status,
// elect and observe through a leasehold server with a token file; a wrong
// token's refusal names its file and never shows it; a missing file is
// named; --token-file on a store that is not a server, or beside the URL's
// own token_file, is a usage error.
func TestTokenFileFlag(t *testing.T) {
	e := newEnv(t)
	tokens, client, wrong := filepath.Join(e.dir, "tokens"), filepath.Join(e.dir, "ci.token"), filepath.Join(e.dir, "wrong.token")
	writeFile(t, tokens, "ci ci-token-0123456789abcdef * jobs/\n")
	writeFile(t, client, "ci-token-0123456789abcdef\n")
	writeFile(t, wrong, "wrong-token-0123456789abcdef\n")
	_, ann := startServe(t, e, "--store", e.store, "--listen", "127.0.0.1:0", "--insecure-loopback", "--token-file", tokens)
	store := "leasehold+" + ann.URL
	with := []string{"--store", store, "--token-file", client}
	obs := e.start(nil, append([]string{"observe", "jobs/leader", "--json", "--ttl", "3s"}, with...)...)
	code, out, stderr := e.lh(nil, append([]string{"elect", "jobs/leader", "--label", "tf", "--ttl", "3s"}, append(with, "--", "sh", "-c", `echo "epoch $LEASEHOLD_EPOCH"; sleep 2`)...)...)
	if code != 0 || !strings.HasPrefix(out, "epoch ") {
		t.Fatalf("elect with --token-file exited %d, printed %q: %s", code, out, stderr)
	}
	waitFor(t, 30*time.Second, "observe with --token-file to see the leader", func() bool {
		return strings.Contains(obs.stdout.String(), `"label":"tf"`)
	})
	if err := obs.cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	if code := obs.wait(t, 30*time.Second); code != 0 {
		t.Errorf("observe exited %d after SIGINT: %s", code, obs.stderr.String())
	}
	if code, _, stderr := e.lh(nil, append([]string{"run", "jobs/a"}, append(with, "--", "true")...)...); code != 0 {
		t.Errorf("run with --token-file exited %d: %s", code, stderr)
	}
	if code, out, stderr := e.lh(nil, append([]string{"status", "jobs/a", "--json"}, with...)...); code != 0 || !strings.Contains(out, `"held":false`) {
		t.Errorf("status with --token-file exited %d: %s %s", code, out, stderr)
	}
	for _, tc := range []struct {
		args []string
		code int
		says string
	}{
		{[]string{"--store", store, "--token-file", wrong}, exitFailure, "not one this server accepts (revoked, or mistyped) (the token read from " + wrong + ")"},
		{[]string{"--store", store, "--token-file", filepath.Join(e.dir, "none")}, exitFailure, filepath.Join(e.dir, "none")},
		{[]string{"--token-file", client}, exitUsage, "--token-file " + client + " is for a leasehold server's store URL"},
		{[]string{"--store", store + "?token_file=" + url.QueryEscape(client), "--token-file", client}, exitUsage, "give the token file once"},
	} {
		code, _, stderr := e.lh(nil, append([]string{"status", "jobs/a"}, tc.args...)...)
		if code != tc.code || !strings.Contains(stderr, tc.says) || strings.Contains(stderr, "0123456789abcdef") {
			t.Errorf("status %v exited %d: %q, want %d saying %q, and no token", tc.args, code, stderr, tc.code, tc.says)
		}
	}
}
