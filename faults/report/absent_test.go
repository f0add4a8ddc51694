package report_test

import (
	"strings"
	"testing"
	"time"

	"github.com/leasehold-go/leasehold/faults/check"
	"github.com/leasehold-go/leasehold/faults/report"
)

// staticStub stands for harness.StaticFault: F9k applies to kube alone,
// and F5 acts on kube only in part.
func staticStub(store, id string) (notRun, note string, err error) {
	switch {
	case id == check.F9k && store != "kube":
		return "kube alone", "", nil
	case id == check.F5 && store == "kube":
		return "", "in part", nil
	}
	return "", "", nil
}

// TestAddFaultNotes: results made before a fault class existed (F9k, F17
// in testdata/missing-fault.jsonl) still list it, as not run with its
// reason, in the fault table's order; a class injected with a caveat
// gets it.
func TestAddFaultNotes(t *testing.T) {
	rs, _, err := report.ReadRecords("testdata/missing-fault.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	sums := report.Aggregate(rs, nil, []string{"redis", "etcd", "kube"})
	report.AddFaultNotes(sums, staticStub)
	report.AddFaultNotes(sums, staticStub) // once only
	md := report.Markdown(sums, nil, "long", "./scripts/faults --long", time.Unix(0, 0))
	section := func(store string) string {
		_, s, _ := strings.Cut(md, "\n### "+store+"\n")
		s, _, _ = strings.Cut(s, "\n### ")
		return s
	}
	f9k := "- F9k (" + check.Describe(check.F9k) + "): not run: kube alone\n"
	for _, tc := range []struct {
		store       string
		want, order []string // order: lines that must follow one another
		not         []string
	}{
		{"redis", []string{f9k}, []string{"- F9m (x)", f9k, "- F10 (x)"}, []string{"F17 ("}},
		{"etcd", []string{f9k, "- F17 (" + check.Describe(check.F17) + "): not run: not in the fault table when these runs were made (results from commit e998c8c)\n"},
			[]string{"- F9m (x)", f9k, "- F11 (x)"}, nil},
		{"kube", []string{"- F5 (" + check.Describe(check.F5) + "): in part\n"}, []string{"- F5 (", "- F5c (x)"}, []string{"F9k (" + check.Describe(check.F9k) + "): not run"}},
	} {
		s := section(tc.store)
		for _, w := range tc.want {
			if strings.Count(s, w) != 1 {
				t.Errorf("%s: %d times %q, want once", tc.store, strings.Count(s, w), w)
			}
		}
		for i := 1; i < len(tc.order); i++ {
			if a, b := strings.Index(s, tc.order[i-1]), strings.Index(s, tc.order[i]); a < 0 || b < a {
				t.Errorf("%s: %q not before %q", tc.store, tc.order[i-1], tc.order[i])
			}
		}
		for _, n := range tc.not {
			if strings.Contains(s, n) {
				t.Errorf("%s: lists %q", tc.store, n)
			}
		}
	}
}
