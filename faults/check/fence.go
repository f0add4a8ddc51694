package check

import "github.com/leasehold-go/leasehold/faults/history"

// checkFence is W2's exact check: a scan of the resource's admissions in
// the order it made them (it records each decision in the same critical
// section as the decision).
func checkFence(evs []history.Event, m *Metrics) {
	type state struct {
		hi    uint64
		owner string
	}
	st := map[string]*state{}
	for _, e := range evs {
		if e.Kind != history.EvAdmit && e.Kind != history.EvFenced {
			continue
		}
		s := st[e.Key]
		if s == nil {
			s = &state{}
			st[e.Key] = s
		}
		m.FencedWrites++
		stale := e.Token < s.hi || (e.Token == s.hi && s.hi != 0 && e.Owner != s.owner)
		switch e.Kind {
		case history.EvAdmit:
			if stale {
				m.StaleAccepted++
				m.violate("stale write admitted on %s: token %d (owner %.8s) after token %d (owner %.8s)", e.Key, e.Token, e.Owner, s.hi, s.owner)
			}
			if e.Token > s.hi {
				s.hi, s.owner = e.Token, e.Owner
			}
		case history.EvFenced:
			if stale {
				m.Saves++
			} else {
				m.FalseRefusals++
				m.violate("write with token %d on %s refused although the highest was %d", e.Token, e.Key, s.hi)
			}
		}
	}
}
