package report_test

import (
	"strings"
	"testing"
	"time"

	"github.com/leasehold-go/leasehold/faults/check"
	"github.com/leasehold-go/leasehold/faults/report"
)

// TestPrimMarkdown checks the W8 and W9 rows: runs pooled per store,
// workload and mutation; a mutation's verdict says whether it was caught,
// a missed target replaces the verdict.
func TestPrimMarkdown(t *testing.T) {
	if got := report.PrimMarkdown(nil, []string{"sqlite"}); got != "" {
		t.Errorf("no runs: %q, want nothing", got)
	}
	rs := []*check.PrimResult{
		{Store: "sqlite", Workload: "W8", Holds: 50, Writes: 150, StaleRefused: 1, Episodes: map[string]int{check.F2: 1, check.F3: 1}},
		{Store: "sqlite", Workload: "W8", Holds: 40, Writes: 100, StaleRefused: 2, Episodes: map[string]int{check.F2: 1}},
		{Store: "sqlite", Workload: "W8", Mutation: true, Holds: 50, OverAdmit: 44, Caught: true},
		{Store: "redis", Workload: "W9", Holds: 26, WriterHolds: 14, LongestWait: 3146 * time.Millisecond, StarveBound: 20 * time.Second,
			Conflicts: 1, Missed: []string{"holds overlapping a writer's: 1"}},
	}
	md := report.PrimMarkdown(rs, []string{"sqlite", "redis", "etcd"})
	for _, want := range []string{
		"| sqlite | W8 | 2 | F2 x2, F3 x1 | 90 | 250 | 3 / 0 | 0 / 0 / 0 | 0 | - | ok |",
		"| sqlite | W8 mutation | 1 |  | 50 | 0 | 0 / 0 | 44 / 0 / 0 | 0 | - | CAUGHT in 1 of 1 |",
		"| redis | W9 | 1 |  | 26 | 0 | 0 / 0 | 0 / 0 / 1 | 0 | 14, 3.146s (bound 20s) | holds overlapping a writer's: 1 |",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("missing row %q in\n%s", want, md)
		}
	}
	if strings.Contains(md, "| etcd |") {
		t.Errorf("a row for a store without runs:\n%s", md)
	}
	if s := report.PrimSummary(rs[2]); !strings.Contains(s, "W8 mutation") || !strings.HasSuffix(s, "CAUGHT") {
		t.Errorf("summary %q", s)
	}
}
