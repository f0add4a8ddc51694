package check

import (
	"fmt"
	"strings"
	"time"

	"github.com/leasehold-go/leasehold/faults/history"
)

// leaseOps turns a sorted history into each key's lease operations (see
// the lease-history check in leaselin.go); hold is the expiry bound after
// a call, in ns; an acquire in a window of loss's faults may end a live
// grant.
func leaseOps(evs []history.Event, hold int64, loss LeaseLoss) map[string][]leaseOp {
	by := map[string][]leaseOp{}
	var t0 int64 // the history's first instant, times in descriptions count from it
	for i, e := range evs {
		if i == 0 || e.T < t0 {
			t0 = e.T
		}
		if e.T0 != 0 && e.T0 < t0 {
			t0 = e.T0
		}
	}
	at := func(t int64) string { return time.Duration(t - t0).Round(time.Millisecond).String() }
	add := func(op leaseOp, what string) {
		if op.ends {
			what += " (in a loss fault's window)"
		}
		op.desc = fmt.Sprintf("%s %s %s token %d owner %.8s [%s, %s]", op.src, what, op.key, op.token, op.owner, at(op.call), at(op.ret))
		by[op.key] = append(by[op.key], op)
	}
	eps := episodes(evs)
	for _, e := range evs {
		op := leaseOp{key: e.Key, src: e.Src, owner: e.Owner, token: e.Token, call: e.T0, ret: e.T, hold: hold}
		switch e.Kind {
		case history.EvStoreAcquire:
			op.kind = leaseAcquire
			op.ends = loss.window(eps, e.T0)
			switch {
			case e.Err == "" && e.Token != 0:
				add(op, "acquired")
			case refused(e.Err):
				// a refusal: the model has no upper bound on expiry, so it proves nothing
			default:
				op.maybe, op.token = true, 0
				add(op, "acquire (outcome unknown: "+e.Err+")")
			}
		case history.EvStoreRenew:
			if e.Err == "" {
				op.kind = leaseRenew
				add(op, "renewed")
			}
		case history.EvStoreRelease:
			op.kind = leaseRelease
			switch {
			case e.Err == "":
				add(op, "released")
			case strings.Contains(e.Err, "not held by this owner") && !underFault(eps, e.T0, e.T):
				// the store said the grant was not its holder's: no effect
			case strings.Contains(e.Err, "not held by this owner"):
				// under a fault the answer may be to a retry of a request
				// whose reply was lost: the first attempt may have freed the
				// key, and the retry then found it another's (the S3 store's
				// conditional PUT, retried by the SDK after a partition)
				op.maybe = true
				add(op, "release (answered not held under a fault: outcome unknown)")
			default:
				op.maybe = true
				add(op, "release (outcome unknown: "+e.Err+")")
			}
		}
	}
	for _, k := range leaseKills(evs) {
		add(k, "killed, holding")
	}
	for _, k := range finalKills(evs) {
		add(k, "killed at the end of the run, holding")
	}
	return by
}

// underFault reports whether a fault episode was on at some time in [from,
// to]: a reply lost then can make a client retry a request that landed.
func underFault(eps []episode, from, to int64) bool {
	for _, ep := range eps {
		if ep.on <= to && ep.off >= from {
			return true
		}
	}
	return false
}

// finalKills are the maybe-releases of the harness's SIGKILL of every
// holder at the end of the run, for histories recorded before the harness
// wrote that kill down (history.EvEndKill, taken by leaseKills): one
// per key a holder process acted on, from its last recorded event on the
// key to the final probe's first call (the holders were dead by then), for
// every process that no F3/F9 kill ended after its last event. A release
// in flight at the kill may land with its reply never recorded.
func finalKills(evs []history.Event) []leaseOp {
	var probe int64 // the final probe's first call: the harness's own acquires
	last := map[string]map[string]int64{}
	end := map[string]int64{}
	for _, e := range evs {
		if e.Kind == history.EvEndKill {
			return nil // the kill is in the history: leaseKills takes it
		}
	}
	for _, e := range evs {
		if e.Kind == history.EvStoreAcquire && e.Src == "harness" && (probe == 0 || e.T0 < probe) {
			probe = e.T0
		}
		if e.Src == "harness" || e.Key == "" {
			continue
		}
		if last[e.Src] == nil {
			last[e.Src] = map[string]int64{}
		}
		last[e.Src][e.Key] = max(last[e.Src][e.Key], e.T)
		end[e.Src] = max(end[e.Src], e.T)
	}
	if probe == 0 {
		return nil
	}
	for _, ep := range episodes(evs) {
		if ep.fault != F3 && ep.fault != F9 {
			continue
		}
		for _, id := range strings.Split(ep.target, ",") {
			if t, ok := end[id]; ok && ep.on >= t {
				delete(last, id) // its kill is in the history (leaseKills)
			}
		}
	}
	var out []leaseOp
	for src, keys := range last {
		for key, t := range keys {
			if t <= probe {
				out = append(out, leaseOp{kind: leaseKill, key: key, src: src, call: t, ret: probe, maybe: true})
			}
		}
	}
	return out
}

// leaseKills are the maybe-releases a holder kill makes (F3, F9 where it
// names holders, and the kill of every holder at the run's end,
// history.EvEndKill): one per key the killed process acted on, from its
// last recorded event on the key before the kill (a release in flight
// then was sent after it) to the kill. A harness's halt of a holder
// (HaltMark) counts as its kill: the releases it sends on its way out may
// apply without a recorded return.
func leaseKills(evs []history.Event) []leaseOp {
	var out []leaseOp
	kill := func(target string, at int64) {
		for _, id := range strings.Split(target, ",") {
			last := map[string]int64{}
			for _, e := range evs {
				if e.Src == id && e.Key != "" && e.T <= at {
					last[e.Key] = max(last[e.Key], e.T)
				}
			}
			for key, t := range last {
				out = append(out, leaseOp{kind: leaseKill, key: key, src: id, call: t, ret: max(t, at), maybe: true})
			}
		}
	}
	for _, ep := range episodes(evs) {
		if ep.fault == F3 || ep.fault == F9 {
			kill(ep.target, ep.on)
		}
	}
	for _, e := range evs {
		if e.Kind == history.EvEndKill {
			kill(e.Target, e.T)
		}
	}
	for id, on := range halted(evs) {
		kill(id, on)
	}
	return out
}

// refused reports whether an acquire's error is the store's refusal (a
// *leasehold.HeldError, or leasehold.ErrHeld bare): the key was held, the
// request changed nothing.
func refused(err string) bool {
	return strings.HasPrefix(err, `leasehold: key "`) && strings.Contains(err, `" is held`) ||
		strings.Contains(err, "held by another owner")
}
