package report

import (
	"fmt"
	"strings"

	"github.com/leasehold-go/leasehold/faults/check"
	"github.com/leasehold-go/leasehold/faults/history"
)

// details is the section with each store's figures in full.
func (p *page) details(sums []*StoreSummary) {
	p.w("\n## Details per store\n")
	for _, s := range sums {
		if s.Runs > 0 {
			p.storeDetails(s)
		}
	}
}

// storeDetails is one store's part of the details.
func (p *page) storeDetails(s *StoreSummary) {
	w := p.w
	m := &s.Sum
	w("\n### %s\n\n", s.Store)
	w("- Runs: %s, TTL %s, %d holder processes contending for %d keys; machine load average %.1f-%.1f on 2 cores.\n", s.scope(), s.TTL, s.Holders, s.Keys, s.LoadMin, s.LoadMax)
	if s.TokenCaveat != "" {
		w("- Token caveat (from the store's Info): %s\n", mdEscape(s.TokenCaveat))
	}
	var eps []string
	for _, c := range check.Faults {
		if n := s.Episodes[c.ID]; n > 0 {
			eps = append(eps, fmt.Sprintf("%s x%d", c.ID, n))
		}
	}
	w("- Faults injected: %s.\n", strings.Join(eps, ", "))
	w("- W2 fenced register: %s writes, %s refused as stale (the fence at work; %s of them during or just after F2 pauses, %d of %d pauses bitten), %d stale admitted, %d fresh refused; porcupine: %s.\n",
		commas(m.FencedWrites), commas(m.Saves), commas(m.PauseSaves), m.BittenPauses, s.Episodes["F2"], m.StaleAccepted, m.FalseRefusals, m.Linearizable)
	w("- W3 tokens: %s grants, %d went backwards, %d repeated.\n", commas(m.Grants), m.TokenBackwards, m.TokenRepeats)
	w("- Concurrent holders (a lease accepted while another was within its deadline): %d%s.\n", m.DoubleGrants, byFault(m.DoubleByFault))
	w("%s\n", mdEscape(s.Lease.detail(s.Runs)))
	if n := s.Episodes["F5c"]; n > 0 {
		w("- F5c late clean-up: in %d of %d episodes a retry won the key before the lost acquire's delayed clean-up reached the store (%d of them with the lost acquire's owner id); concurrent holders under F5c: %d.\n",
			m.LateCleanups, n, m.LateCleanupsSameOwner, m.DoubleByFault["F5c"])
	}
	w("- W4 protected operations: %s, %d issued after the holder's own loss signal, %d after its own deadline; %s loss signals in all, %d under F1 pauses (spurious).\n",
		commas(m.Ops), m.OpsAfterLoss, m.OpsAfterDeadline, commas(m.Losses), m.SpuriousF1)
	w("- W1 unfenced counter (negative control): %s writes, %s lost updates, %s overlapping read-modify-writes; violations in %d of %d runs.\n",
		commas(m.CounterWrites), commas(m.LostUpdates), commas(m.Overlaps), s.ControlRuns, s.Runs)
	w("- W5 takeover after a holder kill: store grant %s, client lease %s; %s grants refused by the client as arriving after its deadline.\n",
		ratios(s.Takeovers), ratios(m.TakeoversClient), commas(m.LateGrants))
	w("- Machine stalls (the harness's own 10 ms ticker late by over %s): %d; takeovers that overlapped one by over a tenth of the TTL, reported apart and not held against the bound: %s.\n",
		history.StallThreshold, m.Stalls, ratios(s.Stalled))
	for _, n := range s.Notes {
		w("- %s\n", mdEscape(n))
	}
	for _, x := range s.Missed {
		w("- **Missed**: %s\n", mdEscape(x))
	}
	for _, x := range s.Invalid {
		w("- **Invalid run**: %s\n", mdEscape(x))
	}
	if len(m.Violations) > 0 {
		w("- Findings, for inspection (the first of each run; a target missed is listed above as **Missed**, the rest are the figures above):\n")
	}
	for _, v := range m.Violations {
		w("  - %s\n", mdEscape(v))
	}
}
