package main

import (
	"strconv"
	"strings"
	"testing"

	"github.com/leasehold-go/leasehold/internal/testserver"
)

// The zookeeper store from the shell: run holds the key for the command
// (with a token that is a fence: no warning), and the one-shot commands
// refuse it, since a grant lives in the acquiring process's session.
func TestZooKeeperStore(t *testing.T) {
	e := newEnv(t)
	store := testserver.NewZooKeeper(t, testserver.ZooKeeperOptions{}).URL("/cli")
	code, out, stderr := e.lh(nil, "run", "--store", store, "--key", "k", "--", "sh", "-c", `echo "$LEASEHOLD_TOKEN"`)
	if code != 0 || strings.TrimSpace(out) == "" || strings.Contains(stderr, "not fencing tokens") {
		t.Fatalf("run on zookeeper exited %d, stdout %q, stderr %q; want 0, the token, no warning", code, out, stderr)
	}
	first, err := strconv.ParseUint(strings.TrimSpace(out), 10, 64)
	if err != nil {
		t.Fatalf("token %q: %v", out, err)
	}
	code, out, stderr = e.lh(nil, "run", "--store", store, "--key", "k", "--", "sh", "-c", `echo "$LEASEHOLD_TOKEN"`)
	if second, err := strconv.ParseUint(strings.TrimSpace(out), 10, 64); code != 0 || err != nil || second <= first {
		t.Fatalf("second run exited %d, token %q after %d: %s", code, out, first, stderr)
	}
	code, _, stderr = e.lh(nil, "run", "--store", store, "--key", "k", "--", "true")
	if code != 0 {
		t.Fatalf("leasehold run --store %s --key k -- true exited %d: %s", store, code, stderr)
	}
	code, out, stderr = e.lh(nil, "acquire", "--store", store, "--key", "k")
	if code != exitUsage || strings.Contains(out, "LEASEHOLD_TOKEN") || !strings.Contains(stderr, "the zookeeper store") || !strings.Contains(stderr, "leasehold run") {
		t.Fatalf("acquire on zookeeper exited %d, stdout %q, stderr %q; want %d and an error naming the store and leasehold run", code, out, stderr, exitUsage)
	}
}
