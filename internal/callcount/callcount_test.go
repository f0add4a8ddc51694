package callcount

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

// TestCounter counts requests through Do and RoundTrip by kind, and Take
// starts the count again.
func TestCounter(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	c := New(func(r *http.Request) string { return r.Method + " " + Segment(r, "keys", "tokens") })
	for _, u := range []string{"/b/keys/x", "/b/keys/y", "/b/tokens/x", "/keys/x"} {
		r, _ := http.NewRequest(http.MethodGet, srv.URL+u, nil)
		resp, err := c.Do(r)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	r, _ := http.NewRequest(http.MethodPut, srv.URL+"/b/keys/x", nil)
	resp, err := c.RoundTrip(r)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	total, by := c.Take()
	if total != 5 || by["GET keys"] != 2 || by["GET tokens"] != 1 || by["GET ?"] != 1 || by["PUT keys"] != 1 {
		t.Fatalf("Take = %d, %v", total, by)
	}
	if total, by := c.Take(); total != 0 || len(by) != 0 {
		t.Fatalf("second Take = %d, %v; want nothing", total, by)
	}
}

func TestHeader(t *testing.T) {
	r, _ := http.NewRequest(http.MethodPut, "http://x/a", nil)
	r.Header["x-ms-lease-action"] = []string{"acquire"}
	if got := Header(r, "X-Ms-Lease-Action"); got != "acquire" {
		t.Fatalf("Header = %q", got)
	}
	if got := Header(r, "x-other"); got != "" {
		t.Fatalf("Header of a missing name = %q", got)
	}
}
