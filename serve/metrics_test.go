package serve

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/leasehold-go/leasehold/internal/wire"
)

// TestMetricsCounts: requests are counted by route and status (an unknown
// path as "other"), refusals by code, latency by route but for watches;
// kept grants are counted; nothing of a key, owner id or token is in the
// snapshot.
func TestMetricsCounts(t *testing.T) {
	s, _ := newServer(t)
	const key = "jobs/secret-key-4f2a"
	g := acquire(t, s, key, owner)
	held := jsonOf(t, wire.AcquireRequest{Key: key, Owner: owner + "x", TTLMs: 60000})
	if w := do(t, s, "POST", "/v1/acquire", held); w.Code != http.StatusConflict {
		t.Fatalf("a second acquire: %d", w.Code)
	}
	do(t, s, "GET", "/v1/holder?key=jobs/free-9b1c", "")
	do(t, s, "GET", "/v2/"+key, "")
	do(t, s, "GET", "/v1/watch?key="+key+"&mode=watch", "") // 501 on memory
	m := s.Metrics()
	want := []RequestCount{{"/v1/acquire", 200, 1}, {"/v1/acquire", 409, 1}, {"/v1/holder", 404, 1}, {"/v1/watch", 501, 1}, {"other", 404, 1}}
	if !slices.Equal(m.Requests, want) {
		t.Errorf("requests %+v, want %+v", m.Requests, want)
	}
	refusals := map[string]uint64{wire.CodeHeld: 1, wire.CodeNotHeld: 1, wire.CodeNotFound: 1, wire.CodeNotImplemented: 1}
	if fmt.Sprint(m.Refusals) != fmt.Sprint(refusals) {
		t.Errorf("refusals %v, want %v", m.Refusals, refusals)
	}
	var routes []string
	for _, l := range m.Latency {
		routes = append(routes, l.Route)
		if l.Count == 0 || l.Buckets[len(l.Buckets)-1] > l.Count || len(l.Buckets) != len(LatencyBuckets) {
			t.Errorf("latency of %s: %+v", l.Route, l)
		}
	}
	if !slices.Equal(routes, []string{"/v1/acquire", "/v1/holder", "other"}) {
		t.Errorf("latency of the routes %v, want acquire, holder, other (not watch)", routes)
	}
	if m.KeptGrants != 1 || m.BackendErrors != 0 || m.WatchStreams != 0 || m.AcquireWaits != 0 {
		t.Errorf("gauges %+v, want one kept grant and nothing else", m)
	}
	text := fmt.Sprintf("%+v", m)
	for _, secret := range []string{key, owner, g.Handle, "free-9b1c"} {
		if strings.Contains(text, secret) {
			t.Errorf("the metrics %s show %q", text, secret)
		}
	}
}

// TestMetricsRoute: GET /metrics serves Options.MetricsHandler to a token
// that may read some key; a token that may not read gets 403, none 401; a
// server without a handler answers 501.
func TestMetricsRoute(t *testing.T) {
	s, _ := newServer(t)
	if w := do(t, s, "GET", "/metrics", ""); w.Code != http.StatusNotImplemented {
		t.Errorf("/metrics without a handler: %d %s, want 501", w.Code, w.Body)
	}
	as, path := authServer(t)
	writeTokens(t, path, "jobs "+jobsToken+" read jobs/\nwriter "+adminToken+" acquire *\n")
	if err := as.opts.Tokens.Load(path); err != nil {
		t.Fatal(err)
	}
	as.opts.MetricsHandler = http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, "metrics") })
	if w := doAs(t, as, jobsToken, "GET", "/metrics", ""); w.Code != http.StatusOK || w.Body.String() != "metrics" {
		t.Errorf("/metrics as a reader: %d %s", w.Code, w.Body)
	}
	if w := doAs(t, as, adminToken, "GET", "/metrics", ""); w.Code != http.StatusForbidden {
		t.Errorf("/metrics as a token without read: %d %s, want 403", w.Code, w.Body)
	}
	if w := doAs(t, as, "", "GET", "/metrics", ""); w.Code != http.StatusUnauthorized {
		t.Errorf("/metrics without a token: %d %s, want 401", w.Code, w.Body)
	}
}

// TestTooLargeClosesConnection: a body over MaxBodyBytes still ends its
// connection (net/http's MaxBytesReader sees the server's own
// ResponseWriter through the metrics' recorder), so the rest of the body
// is not read.
func TestTooLargeClosesConnection(t *testing.T) {
	s, _ := newServer(t)
	hs := httptest.NewServer(s)
	defer hs.Close()
	body := `{"key":"k","owner":"o-owner-0123456789","ttl_ms":1000,"label":"` + strings.Repeat("x", 2*MaxBodyBytes) + `"}`
	resp, err := hs.Client().Post(hs.URL+"/v1/acquire", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestEntityTooLarge || !resp.Close {
		t.Errorf("an oversized body: %d, connection closed %v; want 413 and closed", resp.StatusCode, resp.Close)
	}
}
