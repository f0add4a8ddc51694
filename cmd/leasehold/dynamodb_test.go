package main

import (
	"strconv"
	"strings"
	"testing"

	"github.com/leasehold-go/leasehold/internal/testserver"
)

// The DynamoDB store from the shell: migrate creates the table, run holds
// a key around a command (credentials from the AWS_ variables, not the
// URL), a second run finds the key held by a one-shot acquire and says by
// whom, status reports the holder, and release frees the key, so that a
// run gets it at once (clock-free expiry would make it wait a TTL for a
// lease left held).
func TestDynamoDBStore(t *testing.T) {
	e := newEnv(t)
	d := testserver.NewDynalite(t, testserver.DynaliteOptions{})
	store := "dynamodb://cli-test?endpoint=" + d.Endpoint()
	creds := []string{"AWS_ACCESS_KEY_ID=" + testserver.DynaliteAccessKey, "AWS_SECRET_ACCESS_KEY=" + testserver.DynaliteSecretKey,
		"AWS_REGION=" + testserver.DynaliteRegion, "AWS_CONFIG_FILE=/nonexistent", "AWS_SHARED_CREDENTIALS_FILE=/nonexistent"}
	if code, _, stderr := e.lh(creds, "migrate", "--store", store); code != 0 {
		t.Fatalf("migrate exited %d: %s", code, stderr)
	}
	code, out, stderr := e.lh(creds, "run", "--store", store, "--key", "nightly", "--", "sh", "-c", `echo "token=$LEASEHOLD_TOKEN"`)
	if code != 0 || !strings.HasPrefix(out, "token=") || strings.TrimSpace(out) == "token=" {
		t.Fatalf("run exited %d, stdout %q: %s", code, out, stderr)
	}
	first, _ := strconv.ParseUint(strings.TrimSpace(strings.TrimPrefix(out, "token=")), 10, 64)
	code, out, stderr = e.lh(creds, "acquire", "--store", store, "--key", "nightly", "--label", "shell-1", "--json")
	if code != 0 {
		t.Fatalf("acquire exited %d: %s", code, stderr)
	}
	g := decode[grantJSON](t, "acquire --json", out)
	if g.Token <= first {
		t.Fatalf("acquire's token %d is not above the run's %d", g.Token, first)
	}
	code, _, stderr = e.lh(creds, "run", "--store", store, "--key", "nightly", "--", "true")
	if code != exitHeld || !strings.Contains(stderr, "shell-1") {
		t.Fatalf("run on a held key exited %d, want %d naming the holder: %s", code, exitHeld, stderr)
	}
	code, out, _ = e.lh(creds, "status", "--store", store, "--key", "nightly", "--json")
	if h := decode[holderJSON](t, "status --json", out); code != 0 || !h.Held || h.Token != g.Token || h.Label != "shell-1" || h.RemainingMS <= 0 {
		t.Fatalf("status exited %d: %+v", code, h)
	}
	code, _, stderr = e.lh(creds, "release", "--store", store, "--key", "nightly", "--owner", g.Owner, "--token", strconv.FormatUint(g.Token, 10))
	if code != 0 {
		t.Fatalf("release exited %d: %s", code, stderr)
	}
	if code, _, stderr = e.lh(creds, "run", "--store", store, "--key", "nightly", "--", "true"); code != 0 {
		t.Fatalf("run after the release exited %d: %s", code, stderr)
	}
	code, _, stderr = e.lh(creds, "run", "--store", "dynamodb://cli-test?endpoint="+d.Endpoint()+"&secret_key=x", "--key", "k", "--", "true")
	if code != exitUsage || !strings.Contains(stderr, "access_key") {
		t.Fatalf("run with a bad dynamodb URL exited %d, want %d: %s", code, exitUsage, stderr)
	}
}
