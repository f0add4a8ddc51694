package main

import (
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/leasehold-go/leasehold/internal/testserver"
)

// The CLI on the blob stores, as a user runs it: migrate creates the
// container, run holds the lease while the command runs and gives it its
// token, a second run on the held key exits 75, and status sees the key
// free again afterwards. Azurite missing fails the test.
func TestRunOnAzblob(t *testing.T) {
	a := testserver.NewAzurite(t, testserver.AzuriteOptions{})
	store := "azblob://" + testserver.AzuriteAccount + "/cli-locks?auth=key&endpoint=" + url.QueryEscape(a.BlobEndpoint())
	env := []string{"AZURE_STORAGE_KEY=" + testserver.AzuriteKey}
	e := newEnv(t)
	e.store = store
	if code, _, stderr := e.lh(env, "migrate"); code != 0 {
		t.Fatalf("migrate exited %d: %s", code, stderr)
	}
	first := e.start(env, "run", "jobs/blob", "--ttl", "15s", "--", "sh", "-c", `echo "token=$LEASEHOLD_TOKEN"; sleep 3`)
	waitFor(t, 30*time.Second, "the first run to start its command", func() bool {
		return strings.Contains(first.stdout.String(), "token=")
	})
	code, _, stderr := e.lh(env, "run", "jobs/blob", "--ttl", "15s", "--", "true")
	if code != exitHeld || !strings.Contains(stderr, "held") {
		t.Fatalf("a second run on the held key exited %d, want %d: %s", code, exitHeld, stderr)
	}
	if code := first.wait(t, 30*time.Second); code != 0 {
		t.Fatalf("the first run exited %d: %s", code, first.stderr.String())
	}
	_, tok, _ := strings.Cut(strings.TrimSpace(first.stdout.String()), "token=")
	if n, err := strconv.ParseUint(tok, 10, 64); err != nil || n == 0 {
		t.Fatalf("the command saw no token: %q", first.stdout.String())
	}
	code, out, stderr := e.lh(env, "status", "jobs/blob", "--json")
	if code != 0 || !strings.Contains(out, `"held":false`) {
		t.Fatalf("status after the run exited %d: %s %s", code, out, stderr)
	}
}
