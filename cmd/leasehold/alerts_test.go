package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// docsDir is the repository's docs folder, from this package's folder.
var docsDir = filepath.Join("..", "..", "docs")

// documentedMetrics returns the Prometheus names of the metrics table of
// docs/metrics.md (its second column).
func documentedMetrics(t *testing.T) map[string]bool {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(docsDir, "metrics.md"))
	if err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile("(?m)^\\| `leasehold\\.[a-z._]+` \\| `(leasehold_[a-z_]+)` \\|")
	names := map[string]bool{}
	for _, m := range re.FindAllStringSubmatch(string(b), -1) {
		names[m[1]] = true
	}
	if len(names) == 0 {
		t.Fatal("docs/metrics.md has no metrics table")
	}
	return names
}

// baseName is a sample's metric name without a histogram's suffix.
func baseName(name string) string {
	for _, s := range []string{"_bucket", "_sum", "_count"} {
		if n, ok := strings.CutSuffix(name, s); ok && strings.HasSuffix(n, "_seconds") {
			return n
		}
	}
	return name
}

// The example alert rules of docs/alerts.yml are valid, fire as their unit
// tests (docs/alerts_test.yml) say, and use only documented metrics.
func TestAlertRules(t *testing.T) {
	rules := filepath.Join(docsDir, "alerts.yml")
	runPromtool(t, nil, "check", "rules", rules)
	runPromtool(t, nil, "test", "rules", filepath.Join(docsDir, "alerts_test.yml"))
	b, err := os.ReadFile(rules)
	if err != nil {
		t.Fatal(err)
	}
	documented := documentedMetrics(t)
	used := regexp.MustCompile(`leasehold_[a-z_]+(_total|_seconds_sum|_seconds_count|_seconds_bucket|_held)\b`).FindAllString(string(b), -1)
	if len(used) == 0 {
		t.Fatal("no leasehold metric found in docs/alerts.yml")
	}
	for _, name := range used {
		if !documented[baseName(name)] {
			t.Errorf("docs/alerts.yml uses %s, which docs/metrics.md does not list", name)
		}
	}
}
