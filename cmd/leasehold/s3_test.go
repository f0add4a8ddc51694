package main

import (
	"strings"
	"testing"

	"github.com/leasehold-go/leasehold/internal/testserver"
)

// The S3 store from the shell: migrate creates the bucket, run holds a key
// around a command (credentials from the AWS_ variables, not the URL),
// a second run finds the key held by a one-shot acquire and says by whom,
// status reports the holder, and release frees the key (shellCycle).
func TestS3Store(t *testing.T) {
	e := newEnv(t)
	v := testserver.NewVersity(t, testserver.VersityOptions{})
	store := "s3://cli-test/jobs?endpoint=" + v.Endpoint()
	creds := []string{"AWS_ACCESS_KEY_ID=" + testserver.VersityAccessKey, "AWS_SECRET_ACCESS_KEY=" + testserver.VersitySecretKey,
		"AWS_REGION=" + testserver.VersityRegion, "AWS_CONFIG_FILE=/nonexistent", "AWS_SHARED_CREDENTIALS_FILE=/nonexistent"}
	if code, _, stderr := e.lh(creds, "migrate", "--store", store); code != 0 {
		t.Fatalf("migrate exited %d: %s", code, stderr)
	}
	shellCycle(t, e, creds, store)
	code, _, stderr := e.lh(creds, "run", "--store", "s3://cli-test?endpoint="+v.Endpoint()+"&secret_key=x", "--key", "k", "--", "true")
	if code != exitUsage || !strings.Contains(stderr, "access_key") {
		t.Fatalf("run with a bad s3 URL exited %d, want %d: %s", code, exitUsage, stderr)
	}
}
