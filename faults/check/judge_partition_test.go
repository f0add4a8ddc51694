package check_test

import (
	"strings"
	"testing"

	"github.com/leasehold-go/leasehold/faults/check"
)

// TestJudgeMemberPartitions: a key granted twice while a consensus store's
// members were cut from each other (F13-F16) is a missed target; the same
// overlap under another fault is left to that fault's own rule.
func TestJudgeMemberPartitions(t *testing.T) {
	for _, c := range []struct {
		double map[string]int
		missed int
	}{
		{map[string]int{check.F13: 1}, 1},
		{map[string]int{check.F14: 2, check.F16: 1}, 2},
		{map[string]int{check.F15: 1}, 1},
		{map[string]int{check.F12: 3, "none": 1}, 0},
		{nil, 0},
	} {
		r := &check.RunResult{Metrics: &check.Metrics{Episodes: map[string]int{}, DoubleByFault: c.double, Linearizable: "Ok"}}
		check.Judge(r)
		var got []string
		for _, m := range r.Missed {
			if strings.Contains(m, "member partition") {
				got = append(got, m)
			}
		}
		if len(got) != c.missed {
			t.Errorf("concurrent holders %v: missed %q, want %d about member partitions", c.double, r.Missed, c.missed)
		}
	}
}
