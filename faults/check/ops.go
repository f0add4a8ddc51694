package check

import (
	"strings"
	"time"

	"github.com/leasehold-go/leasehold/faults/history"
)

type grantID struct {
	key, owner string
	token      uint64
}

// checkOps finds protected operations issued after the holder's own loss
// signal, or after its holder-side deadline as computed from its
// successful store calls (for holders whose clock runs true).
func checkOps(evs []history.Event, p Params, m *Metrics) {
	rho, margin := p.Rho, p.Margin
	if rho == 0 {
		rho = 0.01
	}
	if margin == 0 {
		margin = 5 * time.Millisecond
	}
	holdFor := int64(float64(p.TTL)*(1-rho)) - int64(margin)
	skewed := map[string]bool{}
	lost := map[grantID]int64{}
	type call struct{ t0, t int64 }
	ok := map[grantID][]call{}
	for _, e := range evs {
		g := grantID{e.Key, e.Owner, e.Token}
		switch e.Kind {
		case history.EvStart:
			if !strings.Contains(e.Note, "rate=1 ") && !strings.HasSuffix(e.Note, "rate=1") {
				skewed[e.Src] = true
			}
		case history.EvAcqFail:
			if strings.Contains(e.Err, "arrived after the holder's deadline") {
				m.LateGrants++
			}
		case history.EvLost:
			m.Losses++
			if _, dup := lost[g]; !dup {
				lost[g] = e.T
			}
		case history.EvStoreAcquire, history.EvStoreRenew:
			if e.Err == "" && e.Token != 0 {
				ok[g] = append(ok[g], call{e.T0, e.T})
			}
		}
	}
	for _, e := range evs {
		if e.Kind != history.EvOp {
			continue
		}
		m.Ops++
		g := grantID{e.Key, e.Owner, e.Token}
		if t, ok := lost[g]; ok && e.T0 > t {
			m.OpsAfterLoss++
			m.violate("%s issued an operation on %s (token %d) %s after its own loss signal", e.Src, e.Key, e.Token, time.Duration(e.T0-t))
		}
		if skewed[e.Src] {
			continue
		}
		var deadline int64
		for _, c := range ok[g] {
			if c.t <= e.T0 && c.t0+holdFor > deadline {
				deadline = c.t0 + holdFor
			}
		}
		if deadline != 0 && e.T0 > deadline {
			m.OpsAfterDeadline++
			m.violate("%s issued an operation on %s (token %d) %s after its holder-side deadline", e.Src, e.Key, e.Token, time.Duration(e.T0-deadline))
		}
	}
}

// holdFor is the holder-side hold of one acquire or renew: TTL*(1-rho) -
// margin.
func holdFor(p Params) int64 {
	rho, margin := p.Rho, p.Margin
	if rho == 0 {
		rho = 0.01
	}
	if margin == 0 {
		margin = 5 * time.Millisecond
	}
	return int64(float64(p.TTL)*(1-rho)) - int64(margin)
}
