package check

import (
	"strings"
	"time"

	"github.com/leasehold-go/leasehold/faults/history"
)

// checkExclusion counts concurrent holders: a lease a client accepted while
// another grant of the key was still held by its holder's own rules (its
// last successful acquire or renew, sent at t, holds until t + TTL*(1-rho)
// - margin) and had not been released. A correct store never grants a key
// before the previous grant's TTL has passed by its clock, which is after
// that deadline; so each one is a store (or its deployment) breaking
// mutual exclusion: data lost by a restart, a Redlock majority that no
// longer knows the holder.
func checkExclusion(evs []history.Event, p Params, m *Metrics) {
	hold := holdFor(p)
	type holdRec struct {
		g     grantID
		src   string
		until int64 // holder-side deadline so far
		ended int64 // release sent (0: not yet)
	}
	eps := episodes(evs)
	ends := endKills(evs)
	live := map[string][]*holdRec{} // key -> grants seen
	recs := map[grantID]*holdRec{}
	// A release ends a hold when it is sent (events are in return order),
	// and a kill ends every hold of the killed process: a dead holder
	// cannot act on its lease, and a store may free its keys at once.
	released := map[grantID]int64{}
	killed := halted(evs)
	for _, ep := range eps {
		if ep.fault == F3 || ep.fault == F9 {
			for _, id := range strings.Split(ep.target, ",") {
				if k, ok := killed[id]; !ok || ep.on < k {
					killed[id] = ep.on
				}
			}
		}
	}
	for _, e := range evs {
		if e.Kind == history.EvStoreRelease {
			g := grantID{e.Key, e.Owner, e.Token}
			if t, ok := released[g]; !ok || e.T0 < t {
				released[g] = e.T0
			}
		}
	}
	for _, e := range evs {
		g := grantID{e.Key, e.Owner, e.Token}
		switch e.Kind {
		case history.EvStoreAcquire, history.EvStoreRenew:
			if e.Err != "" || e.Token == 0 {
				continue
			}
			r := recs[g]
			if r == nil {
				r = &holdRec{g: g, src: e.Src, ended: released[g]}
				if k, ok := killed[e.Src]; ok && (r.ended == 0 || k < r.ended) {
					r.ended = k
				}
				recs[g] = r
				live[e.Key] = append(live[e.Key], r)
			}
			if d := e.T0 + hold; d > r.until {
				r.until = d
			}
		case history.EvAcquired:
			for _, r := range live[e.Key] {
				if r.g == g || r.until <= e.T {
					continue
				}
				if r.ended != 0 && r.ended <= e.T {
					continue
				}
				if endKilled(ends, r.src, e.Key, e.T) {
					continue
				}
				m.DoubleGrants++
				f := "none"
				for _, ep := range eps {
					if e.T >= ep.on-int64(p.TTL) && e.T <= ep.off+3*int64(p.TTL) {
						f = ep.fault
					}
				}
				m.DoubleByFault[f]++
				m.violate("%s accepted %s (token %d) while %s's grant (token %d) had %s left by its own deadline (fault: %s)",
					e.Src, e.Key, e.Token, r.src, r.g.token, time.Duration(r.until-e.T), f)
			}
		}
	}
}

// HaltMark is the note of the harness's mark (Target: the holder) when it
// stops a holder process with SIGTERM (SIGKILL after a grace): the holder
// then releases its keys and exits, and a release in flight when it exits
// (or is killed) may have taken effect at the store without a record of
// its return. So a halt ends the holder's holds, like a kill: without it a
// key the holder released on its way out reads as still held by it, and
// the next holder's grant as a concurrent holder.
const HaltMark = "halt"

// halted maps each holder the harness halted to the time of its first
// halt mark.
func halted(evs []history.Event) map[string]int64 {
	out := map[string]int64{}
	for _, e := range evs {
		if e.Kind != history.EvMark || e.Note != HaltMark || e.Target == "" {
			continue
		}
		if t, ok := out[e.Target]; !ok || e.T < t {
			out[e.Target] = e.T
		}
	}
	return out
}

// endKill is the harness's kill of every holder at the run's end
// (history.EvEndKill), as the concurrent-holders check sees it: the
// holders are killed one by one and the kill is recorded after the last,
// so a holder may have sent a release of a key (its hold done) after its
// last recorded event on the key and before its own kill, and that release
// may have landed with its return never recorded. An acquire after that
// last event and before the recorded kill may follow such a release: it
// is not a proven concurrent holder (the lease-history check takes the
// same release as a maybe-release).
type endKill struct {
	at   int64                       // the recorded kill's time
	last map[string]map[string]int64 // holder -> key -> its last event on the key before at
}

// endKills returns the run's end kill, or nil.
func endKills(evs []history.Event) *endKill {
	var k *endKill
	for _, e := range evs {
		if e.Kind == history.EvEndKill && k == nil {
			k = &endKill{at: e.T, last: map[string]map[string]int64{}}
			for _, id := range strings.Split(e.Target, ",") {
				k.last[id] = map[string]int64{}
			}
		}
	}
	if k == nil {
		return nil
	}
	for _, e := range evs {
		if m := k.last[e.Src]; m != nil && e.Key != "" && e.T <= k.at {
			m[e.Key] = max(m[e.Key], e.T)
		}
	}
	return k
}

// endKilled reports whether holder src's hold of key may have ended by t,
// through a release sent on the way to the end kill (or the kill itself).
func endKilled(k *endKill, src, key string, t int64) bool {
	if k == nil {
		return false
	}
	m := k.last[src]
	return m != nil && t >= m[key]
}
