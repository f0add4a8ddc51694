package check

import (
	"math"
	"sort"
	"strings"
	"time"

	"github.com/leasehold-go/leasehold/faults/history"
)

type episode struct {
	fault, target string
	on, off       int64
}

// episodes pairs the harness's fault on/off events.
func episodes(evs []history.Event) []episode {
	var out []episode
	open := map[string]int{}
	for _, e := range evs {
		if e.Kind != history.EvFault {
			continue
		}
		id := e.Fault + "\x00" + e.Target
		switch e.Phase {
		case "on":
			open[id] = len(out)
			out = append(out, episode{fault: e.Fault, target: e.Target, on: e.T, off: e.T})
		case "off":
			if i, ok := open[id]; ok {
				out[i].off = e.T
				delete(open, id)
			}
		}
	}
	return out
}

// checkFaults attributes saves to pauses, counts spurious losses under short
// pauses and measures takeover after kills.
func checkFaults(evs []history.Event, p Params, m *Metrics) {
	ttl := int64(p.TTL)
	eps := episodes(evs)
	for _, e := range evs {
		if e.Kind == history.EvStall {
			m.Stalls++
		}
	}
	for _, ep := range eps {
		m.Episodes[ep.fault]++
		switch ep.fault {
		case F1:
			for _, e := range evs {
				if e.Kind == history.EvLost && e.Src == ep.target && e.T >= ep.on && e.T <= ep.off+ttl {
					m.SpuriousF1++
					m.violate("F1: %s lost %s during a pause of %s", e.Src, e.Key, time.Duration(ep.off-ep.on))
				}
			}
		case F2:
			n := 0
			for _, e := range evs {
				if e.Kind == history.EvFenced && e.Target == ep.target && e.T >= ep.on && e.T <= ep.off+2*ttl {
					n++
				}
			}
			m.PauseSaves += n
			if n > 0 {
				m.BittenPauses++
			}
		case F5c:
			checkLateCleanup(evs, ep, m)
		case F3, F9:
			for _, r := range takeovers(evs, ep, ttl, history.EvStoreAcquire) {
				end := ep.on + int64(r*float64(ttl))
				if math.IsInf(r, 1) {
					end = math.MaxInt64
				}
				if stalled(evs, ep.on, end) > ttl/10 {
					m.TakeoversStalled = append(m.TakeoversStalled, r)
				} else {
					m.Takeovers = append(m.Takeovers, r)
				}
			}
			m.TakeoversClient = append(m.TakeoversClient, takeovers(evs, ep, ttl, history.EvAcquired)...)
		}
	}
}

// stalled returns how long the machine-wide stalls (EvStall) overlapped
// [from, to], in nanoseconds.
func stalled(evs []history.Event, from, to int64) int64 {
	var n int64
	for _, e := range evs {
		if e.Kind != history.EvStall {
			continue
		}
		if lo, hi := max(e.T0, from), min(e.T, to); hi > lo {
			n += hi - lo
		}
	}
	return n
}

// takeovers measures, for each key a killed holder held, the time from the
// kill to the next acquire (of kind: the store's grant or the client's
// lease) by a holder that was not killed, as a ratio of the TTL (+Inf if
// none came).
func takeovers(evs []history.Event, ep episode, ttl int64, kind string) []float64 {
	killed := map[string]bool{}
	for _, t := range strings.Split(ep.target, ",") {
		killed[t] = true
	}
	held := map[string]grantID{} // key -> grant held by a killed holder at the kill
	for _, e := range evs {
		if e.T > ep.on {
			break
		}
		if !killed[e.Src] {
			continue
		}
		switch e.Kind {
		case history.EvAcquired:
			held[e.Key] = grantID{e.Key, e.Owner, e.Token}
		case history.EvLost, history.EvReleased:
			if g, ok := held[e.Key]; ok && g.owner == e.Owner && g.token == e.Token {
				delete(held, e.Key)
			}
		}
	}
	var out []float64
	for key := range held {
		r := math.Inf(1)
		for _, e := range evs {
			if e.T > ep.on && e.Kind == kind && e.Err == "" && e.Token != 0 && e.Key == key && !killed[e.Src] {
				r = float64(e.T-ep.on) / float64(ttl)
				break
			}
		}
		out = append(out, r)
	}
	sort.Float64s(out)
	return out
}
