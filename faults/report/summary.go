package report

import (
	"fmt"
	"sort"
	"strings"

	"github.com/leasehold-go/leasehold/faults/check"
)

// Summary renders one run's result for a terminal.
func Summary(r *check.RunResult) string {
	m := r.Metrics
	var b strings.Builder
	status := "PASS"
	switch {
	case r.Mutation && len(r.Missed) == 0:
		status = "CAUGHT"
	case len(r.Missed) > 0:
		status = "FAIL"
	case len(r.Invalid) > 0:
		status = "INVALID"
	}
	mut := ""
	if r.Mutation {
		mut = " (mutation: fence check disabled)"
	}
	fmt.Fprintf(&b, "%s %s%s: seed %d, TTL %s, %.0f s, safe tokens claimed: %v, load %.1f-%.1f\n", status, r.Store, mut, r.Seed, r.TTL, r.Seconds, r.SafeTokens, r.Load[0], r.Load[1])
	var eps []string
	for c, n := range m.Episodes {
		eps = append(eps, fmt.Sprintf("%s x%d", c, n))
	}
	sort.Strings(eps)
	fmt.Fprintf(&b, "  faults: %s\n", strings.Join(eps, ", "))
	fmt.Fprintf(&b, "  W2 fenced: %d writes, stale accepted %d, refused (saves) %d [%d under pauses, %d/%d pauses bitten], false refusals %d, porcupine %s\n",
		m.FencedWrites, m.StaleAccepted, m.Saves, m.PauseSaves, m.BittenPauses, m.Episodes["F2"], m.FalseRefusals, m.Linearizable)
	fmt.Fprintf(&b, "  W3 tokens: %d grants, backwards %d, repeated %d; concurrent holders %d %v\n", m.Grants, m.TokenBackwards, m.TokenRepeats, m.DoubleGrants, m.DoubleByFault)
	fmt.Fprintf(&b, "  lease history (porcupine): %s\n", leaseLine(m.Lease))
	if n := m.Episodes["F5c"]; n > 0 {
		fmt.Fprintf(&b, "  F5c late clean-up: %d/%d episodes bitten (a retry won before the delayed clean-up arrived; %d with the same owner id)\n", m.LateCleanups, n, m.LateCleanupsSameOwner)
	}
	fmt.Fprintf(&b, "  W4 ops: %d, after own loss signal %d, after own deadline %d; losses %d, spurious under F1 %d\n",
		m.Ops, m.OpsAfterLoss, m.OpsAfterDeadline, m.Losses, m.SpuriousF1)
	fmt.Fprintf(&b, "  W1 unfenced: %d writes, lost updates %d, overlaps %d\n", m.CounterWrites, m.LostUpdates, m.Overlaps)
	fmt.Fprintf(&b, "  W5 takeover after kill: store %s (bound %.2f x TTL), client %s; late grants refused %d; stuck keys %d\n",
		ratios(m.Takeovers), r.TakeoverBound, ratios(m.TakeoversClient), m.LateGrants, len(m.Stuck))
	if m.Stalls > 0 {
		fmt.Fprintf(&b, "  machine stalls: %d; takeovers during stalls (not held against the bound): %s\n", m.Stalls, ratios(m.TakeoversStalled))
	}
	for _, n := range r.Notes {
		fmt.Fprintf(&b, "  note: %s\n", n)
	}
	for _, s := range r.Invalid {
		fmt.Fprintf(&b, "  INVALID: %s\n", s)
	}
	for _, s := range r.Missed {
		fmt.Fprintf(&b, "  MISSED: %s\n", s)
	}
	for _, v := range m.Violations {
		fmt.Fprintf(&b, "  violation: %s\n", v)
	}
	return strings.TrimRight(b.String(), "\n")
}
