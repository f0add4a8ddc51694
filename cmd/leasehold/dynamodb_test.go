package main

import (
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
	shellCycle(t, e, creds, store)
	code, _, stderr := e.lh(creds, "run", "--store", "dynamodb://cli-test?endpoint="+d.Endpoint()+"&secret_key=x", "--key", "k", "--", "true")
	if code != exitUsage || !strings.Contains(stderr, "access_key") {
		t.Fatalf("run with a bad dynamodb URL exited %d, want %d: %s", code, exitUsage, stderr)
	}
}
