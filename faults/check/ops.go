package check

import (
	"math"
	"strconv"
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
// successful store calls (for holders whose clock runs true, or off by no
// more than rho: the design's claim, so they are held to the true clock's
// deadline too).
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
			if r := noteRate(e.Note); math.IsNaN(r) || math.Abs(1-r) > rho+1e-9 {
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

// noteRate reads the clock rate from a holder's start note ("pid=1
// rate=0.6"): NaN when there is none.
func noteRate(note string) float64 {
	for _, f := range strings.Fields(note) {
		if v, ok := strings.CutPrefix(f, "rate="); ok {
			if r, err := strconv.ParseFloat(v, 64); err == nil {
				return r
			}
		}
	}
	return math.NaN()
}
