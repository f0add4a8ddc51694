package storeurl

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/leasehold-go/leasehold/internal/testserver"
)

// NewKubeNamespace starts a kube-apiserver for t with namespace ns made,
// and returns it and the path of its kubeconfig for ns (contexts admin,
// the default, norights and cert). Exported for this package's external
// tests (servers_test.go).
func NewKubeNamespace(t *testing.T, ns string) (*testserver.Kube, string) {
	t.Helper()
	k := testserver.NewKube(t, testserver.KubeOptions{})
	if err := k.CreateNamespace(t.Context(), ns); err != nil {
		t.Fatal(err)
	}
	kc, err := k.Kubeconfig(ns)
	if err != nil {
		t.Fatal(err)
	}
	return k, kc
}

// KubeconfigWithToken writes a copy of k's kubeconfig kc whose admin
// token is token, in a folder of t's, and returns its path.
func KubeconfigWithToken(t *testing.T, k *testserver.Kube, kc, token string) string {
	t.Helper()
	b, err := os.ReadFile(kc)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(path, []byte(strings.ReplaceAll(string(b), k.AdminToken, token)), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}
