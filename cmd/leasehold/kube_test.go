package main

import (
	"strings"
	"testing"

	"github.com/leasehold-go/leasehold/internal/testserver"
)

// The Kubernetes store from the shell, on a real kube-apiserver: run holds
// a key around a command (the kubeconfig named in the URL), a second run
// finds the key held by a one-shot acquire and says by whom, status
// reports the holder, and release frees the key, so that a run gets it at
// once (clock-free expiry would make it wait a TTL for a lease left held).
// A user without RBAC rights on Leases is refused before anything runs,
// naming the namespace and the verbs; migrate says the store keeps no
// schema (and exits 0: nothing to do).
func TestKubeStore(t *testing.T) {
	e := newEnv(t)
	k := testserver.NewKube(t, testserver.KubeOptions{})
	if err := k.CreateNamespace(t.Context(), "cli-test"); err != nil {
		t.Fatal(err)
	}
	kc, err := k.Kubeconfig("cli-test")
	if err != nil {
		t.Fatal(err)
	}
	noEnv := []string{"KUBECONFIG=/nonexistent"}
	store := "kube:///cli-test?kubeconfig=" + kc
	shellCycle(t, e, noEnv, store)
	// The kubeconfig from $KUBECONFIG, and its norights context: refused.
	code, out, stderr := e.lh([]string{"KUBECONFIG=" + kc}, "run", "--store", "kube:///cli-test?context=norights", "--key", "k", "--", "echo", "ran")
	if code == 0 || out != "" || !strings.Contains(stderr, "RBAC denied") || !strings.Contains(stderr, "cli-test") {
		t.Fatalf("run as a user without rights exited %d, stdout %q: %s", code, out, stderr)
	}
	if code, _, stderr = e.lh(noEnv, "migrate", "--store", store); code != 0 || !strings.Contains(stderr, "the kube store keeps no schema") {
		t.Fatalf("migrate exited %d: %s", code, stderr)
	}
	code, _, stderr = e.lh(noEnv, "run", "--store", "kube:///cli-test?kubeconfig="+kc+"&nosuch=1", "--key", "k", "--", "true")
	if code != exitUsage || !strings.Contains(stderr, "nosuch") {
		t.Fatalf("run with a bad kube URL exited %d, want %d: %s", code, exitUsage, stderr)
	}
}
