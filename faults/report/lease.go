package report

import (
	"fmt"
	"slices"
	"strings"

	"github.com/leasehold-go/leasehold/faults/check"
)

// LeaseTally pools the lease-history check (check.LeaseHistory: the
// store's grants, renewals and releases as a register per key, with
// porcupine) over a store's regular runs.
type LeaseTally struct {
	Checked  int // runs with a verdict (runs recorded before the check have none)
	Ops      int // operations checked, over those runs
	Ok       int // runs whose every key linearized
	Illegal  int // runs with a key that has no linearization
	Overlaps int // of those, runs where the concurrent-holders check found the overlap too
	TimedOut int // runs with a key porcupine did not finish within check.LeaseKeyTimeout (and none Illegal)
	// Findings are the first keys without a linearization or timed out,
	// each with its run's seed.
	Findings []string
	// Loss are the fault classes the store declared it may lose a grant
	// under (check.LeaseVerdict.Loss), over its runs.
	Loss []string
}

// add pools one run's verdict.
func (l *LeaseTally) add(r *check.RunResult) {
	v := r.Metrics.Lease
	if v.Result == "" {
		return
	}
	l.Checked++
	l.Ops += v.Ops
	for _, f := range v.Loss {
		if !slices.Contains(l.Loss, f) {
			l.Loss = append(l.Loss, f)
		}
	}
	switch v.Result {
	case "Ok":
		l.Ok++
	case "Illegal":
		l.Illegal++
		if r.Metrics.DoubleGrants > 0 {
			l.Overlaps++
		}
	default:
		l.TimedOut++
	}
	for _, k := range append(append([]string(nil), v.Illegal...), v.TimedOut...) {
		if len(l.Findings) < 6 {
			l.Findings = append(l.Findings, fmt.Sprintf("seed %d: %s", r.Seed, k))
		}
	}
}

// cell is the targets table's lease-history cell: the verdicts and the
// operations they cover, a timeout never counted as Ok.
func (l *LeaseTally) cell(runs int) string {
	if l.Checked == 0 {
		return "not checked (runs recorded before the check)"
	}
	parts := []string{fmt.Sprintf("Ok in %d of %d runs", l.Ok, l.Checked)}
	if l.Illegal > 0 {
		parts = append(parts, fmt.Sprintf("**Illegal** in %d (%d of them also concurrent holders)", l.Illegal, l.Overlaps))
	}
	if l.TimedOut > 0 {
		parts = append(parts, fmt.Sprintf("timed out in %d (%s per key)", l.TimedOut, check.LeaseKeyTimeout))
	}
	s := strings.Join(parts, ", ") + fmt.Sprintf(" over %s operations", commas(l.Ops))
	if n := runs - l.Checked; n > 0 {
		s += fmt.Sprintf("; %d runs recorded before the check", n)
	}
	return s
}

// detail is the per-store details line.
func (l *LeaseTally) detail(runs int) string {
	s := "- Lease history (porcupine, a register per key: one live grant, expiring no earlier than its holder's own deadline): " + l.cell(runs) + "."
	if len(l.Loss) > 0 {
		s += " " + lossNote(l.Loss) + "."
	}
	if len(l.Findings) > 0 {
		s += " Keys without a linearization or timed out: " + strings.Join(l.Findings, "; ") + "."
	}
	return s
}

// leaseLine is a run's lease-history verdict for its summary.
func leaseLine(v check.LeaseVerdict) string {
	if v.Result == "" {
		return "no operations"
	}
	s := fmt.Sprintf("%s over %d operations on %d keys", v.Result, v.Ops, v.Keys)
	if len(v.TimedOut) > 0 {
		s += fmt.Sprintf("; timed out (%s per key): %s", check.LeaseKeyTimeout, strings.Join(v.TimedOut, ", "))
	}
	if len(v.Loss) > 0 {
		s += "; " + lossNote(v.Loss)
	}
	return s
}

// lossNote says under which faults the check let an acquire take over a
// live grant.
func lossNote(loss []string) string {
	return "the store's design may end a grant early under " + strings.Join(loss, ", ") + " (an acquire within a TTL before to 3 TTLs after one may take over a live grant; its token must still be above the ones before)"
}
