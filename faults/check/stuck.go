package check

import (
	"sort"

	"github.com/leasehold-go/leasehold/faults/history"
)

// checkStuck finds keys without progress once the faults healed.
func checkStuck(evs []history.Event, p Params, m *Metrics) {
	progress := map[string]bool{}
	keys := map[string]bool{}
	for _, e := range evs {
		if e.Kind == history.EvAdmit || e.Kind == history.EvFenced {
			keys[e.Key] = true
			if e.Kind == history.EvAdmit && e.T >= p.QuietFrom && (p.End == 0 || e.T <= p.End) {
				progress[e.Key] = true
			}
		}
	}
	for k := range p.Final {
		keys[k] = true
	}
	var stuck []string
	for k := range keys {
		if !progress[k] {
			stuck = append(stuck, k+" (no progress after the faults healed)")
		} else if err := p.Final[k]; err != nil {
			stuck = append(stuck, k+" (final acquire: "+err.Error()+")")
		}
	}
	sort.Strings(stuck)
	m.Stuck = stuck
	for _, s := range stuck {
		m.violate("stuck key %s", s)
	}
}
