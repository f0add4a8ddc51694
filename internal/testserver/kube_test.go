package testserver

import (
	"crypto/tls"
	"net/http"
	"os"
	"testing"
	"time"
)

// kubeGet returns the status of GET path as the user the token or the
// client certificate names.
func kubeGet(t *testing.T, k *Kube, path, token string, cert bool) int {
	t.Helper()
	hc, err := k.httpClient()
	if err != nil {
		t.Fatal(err)
	}
	if cert {
		pair, err := tls.LoadX509KeyPair(k.ClientCert, k.ClientKey)
		if err != nil {
			t.Fatal(err)
		}
		hc.Transport.(*http.Transport).TLSClientConfig.Certificates = []tls.Certificate{pair}
	}
	req, err := http.NewRequestWithContext(ctxT(t), http.MethodGet, k.Endpoint()+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

func TestKubeLifecycle(t *testing.T) {
	k := NewKube(t, KubeOptions{})
	leases := "/apis/coordination.k8s.io/v1/namespaces/default/leases"
	for _, c := range []struct {
		who   string
		token string
		cert  bool
		want  int
	}{
		{"admin token", k.AdminToken, false, http.StatusOK},
		{"client certificate", "", true, http.StatusOK},
		{"user without RBAC rights", k.NoRightsToken, false, http.StatusForbidden},
		{"unknown token", "not-a-token", false, http.StatusUnauthorized},
	} {
		if got := kubeGet(t, k, leases, c.token, c.cert); got != c.want {
			t.Errorf("%s: GET %s = %d, want %d", c.who, leases, got, c.want)
		}
	}
	if _, err := k.Kubeconfig("default"); err != nil {
		t.Fatal(err)
	}
	for range 2 { // the second finds it made
		if err := k.CreateNamespace(ctxT(t), "made"); err != nil {
			t.Fatal(err)
		}
	}
	if got := kubeGet(t, k, "/api/v1/namespaces/made", k.AdminToken, false); got != http.StatusOK {
		t.Errorf("GET the namespace made = %d", got)
	}
	if err := k.CreateNamespace(ctxT(t), "Not_A_Name"); err == nil {
		t.Error("CreateNamespace accepted an invalid name")
	}
	k.Shutdown(5 * time.Second)
	if err := k.Restart(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	if got := kubeGet(t, k, leases, k.AdminToken, false); got != http.StatusOK {
		t.Fatalf("after Restart: GET %s = %d", leases, got)
	}
	k.Stop()
	if _, err := os.Stat(k.Dir); !os.IsNotExist(err) || k.Running() || k.Etcd.Running(0) {
		t.Fatalf("after Stop: apiserver running %v, etcd running %v, folder %v", k.Running(), k.Etcd.Running(0), err)
	}
}
