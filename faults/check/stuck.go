package check

import (
	"errors"
	"sort"

	"github.com/leasehold-go/leasehold/faults/history"
)

// ErrProbeUnreachable marks a final-probe error (Params.Final) where the
// store did not answer (connection refused or broken, no server
// reachable) for longer than the probe's grace: the store is unreachable,
// which says nothing of whether the key stays held.
var ErrProbeUnreachable = errors.New("store unreachable during the final probe")

// checkStuck finds keys without progress once the faults healed, and
// the keys the final probe could not ask because the store did not answer.
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
	var stuck, down []string
	for k := range keys {
		err := p.Final[k]
		switch {
		case !progress[k]:
			stuck = append(stuck, k+" (no progress after the faults healed)")
		case errors.Is(err, ErrProbeUnreachable):
			down = append(down, k+" ("+err.Error()+")")
		case err != nil:
			stuck = append(stuck, k+" (final acquire: "+err.Error()+")")
		}
	}
	sort.Strings(stuck)
	sort.Strings(down)
	m.Stuck, m.Unreachable = stuck, down
	for _, s := range stuck {
		m.violate("stuck key %s", s)
	}
	for _, s := range down {
		m.violate("final probe: %s", s)
	}
}
