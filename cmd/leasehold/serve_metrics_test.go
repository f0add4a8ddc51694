package main

import (
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestServeMetrics: leasehold serve exports its metrics at /metrics on its
// own listener, to a token that may read (401 without one), clean by
// promtool; after requests that carried a key, an owner id and bearer
// secrets (a good one and a wrong one), the requests, refusals, latency
// and kept grants are counted, the only labels are route, code,
// error_code, le (and promhttp's cause), and no secret appears.
func TestServeMetrics(t *testing.T) {
	promtool(t)
	e := newEnv(t)
	const (
		writer = "writer-secret-0123456789abcdef"
		reader = "reader-secret-0123456789abcdef"
		wrong  = "wrong-secret-0123456789abcdef"
		key    = "jobs/key-secret-5c0f"
		owner  = "owner-secret-0123456789abcdef0123"
	)
	tokens := filepath.Join(e.dir, "tokens")
	writeFile(t, tokens, "w "+writer+" acquire,renew,release jobs/\nr "+reader+" read jobs/\n")
	_, ann := startServe(t, e, "--store", "memory://", "--listen", "127.0.0.1:0", "--insecure-loopback", "--token-file", tokens)
	send := func(token, method, path, body string) int {
		req, _ := http.NewRequest(method, ann.URL+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	acquire := `{"key":"` + key + `","owner":"` + owner + `","ttl_ms":60000}`
	if code := send(writer, "POST", "/v1/acquire", acquire); code != 200 {
		t.Fatalf("acquire: %d", code)
	}
	send(wrong, "POST", "/v1/acquire", acquire)
	send(reader, "GET", "/v1/holder?key="+key, "")
	send(writer, "GET", "/"+key+"?token="+writer, "")
	if code := send("", "GET", "/metrics", ""); code != http.StatusUnauthorized {
		t.Errorf("/metrics without a token: %d, want 401", code)
	}
	body, samples := scrapeAs(t, ann.URL+"/metrics", reader)
	if out := runPromtool(t, body, "check", "metrics"); out != "" {
		t.Errorf("promtool check metrics:\n%s\nmetrics:\n%s", out, body)
	}
	for series, want := range map[string]float64{
		`leasehold_serve_requests_total{code="200",route="/v1/acquire"}`:      1,
		`leasehold_serve_requests_total{code="401",route="/v1/acquire"}`:      1,
		`leasehold_serve_requests_total{code="200",route="/v1/holder"}`:       1,
		`leasehold_serve_requests_total{code="404",route="other"}`:            1,
		`leasehold_serve_refusals_total{error_code="unauthorized"}`:           2,
		`leasehold_serve_request_duration_seconds_count{route="/v1/acquire"}`: 2,
		`leasehold_serve_kept_grants`:                                         1,
		`leasehold_serve_watch_streams`:                                       0,
		`leasehold_serve_acquire_waits`:                                       0,
		`leasehold_serve_backend_errors_total`:                                0,
	} {
		if got, ok := samples[series]; !ok || got != want {
			t.Errorf("%s = %v (present %v), want %v", series, got, ok, want)
		}
	}
	for _, secret := range []string{writer, reader, wrong, key, "key-secret", owner} {
		if strings.Contains(string(body), secret) {
			t.Errorf("the metrics show %q:\n%s", secret, body)
		}
	}
	labels := regexp.MustCompile(`[{,]([a-z_]+)="`)
	for _, m := range labels.FindAllStringSubmatch(string(body), -1) {
		switch m[1] {
		case "route", "code", "error_code", "le", "cause": // cause: promhttp's own errors counter
		default:
			t.Errorf("the metrics have the label %q", m[1])
		}
	}
}
