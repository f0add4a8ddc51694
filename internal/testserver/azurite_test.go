package testserver

import (
	"net/http"
	"testing"
)

func TestAzuriteLifecycle(t *testing.T) {
	a := NewAzurite(t, AzuriteOptions{})
	req, err := http.NewRequestWithContext(ctxT(t), http.MethodGet, a.BlobEndpoint()+"?comp=list", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := httpClient().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode < 400 {
		t.Fatalf("an unsigned list got %s, want an error status (the account needs a key)", resp.Status)
	}
	a.Stop()
	if err := answersHTTP(ctxT(t), a.BlobEndpoint()+"?comp=list"); err == nil || a.Running() {
		t.Fatalf("after Stop: running %v, probe %v", a.Running(), err)
	}
}
