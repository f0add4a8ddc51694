package main

import (
	"bufio"
	"bytes"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// promtool returns the path of promtool, failing the test when it is
// missing: the metrics tests never skip (scripts/install/prometheus.sh
// installs it).
func promtool(t *testing.T) string {
	t.Helper()
	if p, err := exec.LookPath("promtool"); err == nil {
		return p
	}
	bin := os.Getenv("LEASEHOLD_BIN")
	if bin == "" {
		bin = filepath.Join(os.Getenv("HOME"), ".cache", "leasehold", "bin")
	}
	if p := filepath.Join(bin, "promtool"); fileExists(p) {
		return p
	}
	t.Fatal("promtool is not installed: run scripts/install/prometheus.sh")
	return ""
}

// runPromtool runs promtool with args and stdin, and fails the test unless
// it exits 0 with nothing to say about problems.
func runPromtool(t *testing.T, stdin []byte, args ...string) string {
	t.Helper()
	cmd := exec.Command(promtool(t), args...)
	cmd.Stdin = bytes.NewReader(stdin)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("promtool %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// servedAt waits for the line in which leasehold names the address of its
// metrics, and returns the URL.
func servedAt(t *testing.T, p *proc) string {
	t.Helper()
	re := regexp.MustCompile(`serving metrics on (http://\S+/metrics)`)
	var url string
	waitFor(t, 15*time.Second, "the metrics address on stderr", func() bool {
		if m := re.FindStringSubmatch(p.stderr.String()); m != nil {
			url = m[1]
		}
		return url != ""
	})
	return url
}

// scrape returns the body of url and its samples by series ("name{labels}"
// exactly as written).
func scrape(t *testing.T, url string) ([]byte, map[string]float64) {
	t.Helper()
	return scrapeAs(t, url, "")
}

// scrapeAs is scrape with a bearer token ("" for none).
func scrapeAs(t *testing.T, url, token string) ([]byte, map[string]float64) {
	t.Helper()
	req, err := http.NewRequest("GET", url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %v", url, resp.StatusCode, err)
	}
	samples := map[string]float64{}
	sc := bufio.NewScanner(bytes.NewReader(body))
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			t.Fatalf("sample %q: %v", line, err)
		}
		samples[line[:i]] = v
	}
	return body, samples
}

// The metrics of a running `leasehold run`: scraped while the command runs,
// clean by promtool, labelled with the key, with the grant, the lease held
// (and its age) and a renewal counted.
func TestRunServesMetrics(t *testing.T) {
	promtool(t)
	e := newEnv(t)
	stop := filepath.Join(e.dir, "stop")
	p := e.start(nil, "run", "metered", "--ttl", "3s", "--metrics-addr", "127.0.0.1:0",
		"--", "sh", "-c", "while [ ! -e "+stop+" ]; do sleep 0.05; done")
	url := servedAt(t, p)
	renewed := `leasehold_store_duration_seconds_count{leasehold_key="metered",leasehold_operation="renew",leasehold_outcome="ok"}`
	var body []byte
	var samples map[string]float64
	waitFor(t, 15*time.Second, "a renewal in the metrics", func() bool {
		body, samples = scrape(t, url)
		return samples[renewed] >= 1
	})
	if out := runPromtool(t, body, "check", "metrics"); out != "" {
		t.Errorf("promtool check metrics:\n%s\nmetrics:\n%s", out, body)
	}
	for series, want := range map[string]float64{
		`leasehold_acquires_total{leasehold_key="metered",leasehold_outcome="granted"}`:                                        1,
		`leasehold_acquires_total{leasehold_key="metered",leasehold_outcome="held"}`:                                           0,
		`leasehold_acquire_duration_seconds_count{leasehold_key="metered",leasehold_outcome="granted"}`:                        1,
		`leasehold_store_duration_seconds_count{leasehold_key="metered",leasehold_operation="acquire",leasehold_outcome="ok"}`: 1,
		`leasehold_leases_held{leasehold_key="metered"}`:                                                                       1,
		`leasehold_lease_losses_total{leasehold_key="metered",leasehold_loss_reason="expired"}`:                                0,
		`leasehold_renew_failures_total{leasehold_key="metered",leasehold_outcome="jeopardy"}`:                                 0,
		`leasehold_fence_rejections_total{leasehold_key="metered"}`:                                                            0,
	} {
		if got, ok := samples[series]; !ok || got != want {
			t.Errorf("%s = %v (present %v), want %v; metrics:\n%s", series, got, ok, want, body)
		}
	}
	if w := samples[`leasehold_acquire_duration_seconds_sum{leasehold_key="metered",leasehold_outcome="granted"}`]; w <= 0 || w > 10 {
		t.Errorf("acquire wait %v s: want a positive time under the test's limits", w)
	}
	// The lease is held: its age is served while it is (the duration
	// histogram appears only when it ends). A renewal came first, so it
	// is past 0.
	if age, ok := samples[`leasehold_lease_age_seconds{leasehold_key="metered"}`]; !ok || age <= 0 {
		t.Errorf("leasehold_lease_age_seconds = %v (present %v), want the held lease's positive age; metrics:\n%s", age, ok, body)
	}
	if !strings.Contains(string(body), "# TYPE leasehold_lease_age_seconds gauge") {
		t.Errorf("leasehold_lease_age_seconds is not served as a gauge; metrics:\n%s", body)
	}
	checkDocumented(t, samples)
	if err := os.WriteFile(stop, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if code := p.wait(t, 15*time.Second); code != 0 {
		t.Fatalf("leasehold run exited %d; stderr:\n%s", code, p.stderr.String())
	}
}

// An address that cannot be had is a usage error (exit 2) naming it,
// before the lease is taken or the command started, for run and elect.
func TestMetricsAddrInUse(t *testing.T) {
	e := newEnv(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	addr := ln.Addr().String()
	for _, cmd := range []string{"run", "elect"} {
		code, _, stderr := e.lh(nil, cmd, "busy", "--metrics-addr", addr, "--", "touch", "ran-"+cmd)
		if code != exitUsage || !strings.Contains(stderr, "--metrics-addr "+addr) || !strings.Contains(stderr, "address already in use") {
			t.Errorf("%s with --metrics-addr in use: exit %d, stderr %q; want 2 naming %s", cmd, code, stderr, addr)
		}
		if fileExists(filepath.Join(e.dir, "ran-"+cmd)) {
			t.Errorf("%s ran the command", cmd)
		}
	}
	// Nothing acquired the key: a plain run gets it at once.
	if code, _, stderr := e.lh(nil, "run", "busy", "--", "true"); code != 0 {
		t.Errorf("run after the refusals: exit %d, stderr %q", code, stderr)
	}
}

// checkDocumented checks that the scraped leasehold metrics are the ones
// docs/metrics.md lists, all of them but the hold durations, which appear
// when the first lease ends.
func checkDocumented(t *testing.T, samples map[string]float64) {
	t.Helper()
	documented := documentedMetrics(t)
	seen := map[string]bool{}
	for series := range samples {
		name, _, _ := strings.Cut(series, "{")
		if !strings.HasPrefix(name, "leasehold_") {
			continue
		}
		seen[baseName(name)] = true
		if !documented[baseName(name)] {
			t.Errorf("served metric %s is not in docs/metrics.md", name)
		}
	}
	for name := range documented {
		if !seen[name] && name != "leasehold_lease_duration_seconds" {
			t.Errorf("docs/metrics.md lists %s, which a running leasehold run does not serve", name)
		}
	}
}
