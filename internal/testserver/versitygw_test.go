package testserver

import (
	"net/http"
	"os"
	"path/filepath"
	"testing"
)

func TestVersityLifecycle(t *testing.T) {
	v := NewVersity(t, VersityOptions{Buckets: []string{"made-at-start"}})
	req, err := http.NewRequestWithContext(ctxT(t), http.MethodGet, v.Endpoint()+"/made-at-start/x", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := httpClient().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode < 400 || resp.Header.Get("Date") == "" {
		t.Fatalf("an unsigned GET got %s (Date %q), want an error status with a Date header", resp.Status, resp.Header.Get("Date"))
	}
	if err := v.CreateBucket("later"); err != nil {
		t.Fatal(err)
	}
	if err := v.CreateBucket("../escape"); err == nil {
		t.Fatal("CreateBucket accepted a path")
	}
	if _, err := os.Stat(filepath.Join(v.DataDir(), "later")); err != nil {
		t.Fatal(err)
	}
	v.Stop()
	if err := answersHTTP(ctxT(t), v.Endpoint()+"/"); err == nil || v.Running() {
		t.Fatalf("after Stop: running %v, probe %v", v.Running(), err)
	}
	if _, err := os.Stat(v.Dir); !os.IsNotExist(err) {
		t.Fatalf("after Stop: folder %v", err)
	}
}
