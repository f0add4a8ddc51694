package check

import (
	"fmt"
	"strings"
	"time"

	"github.com/leasehold-go/leasehold/faults/history"
)

// leaseOps turns a sorted history into each key's lease operations (see
// the lease-history check in leaselin.go); hold is the expiry bound after
// a call, in ns.
func leaseOps(evs []history.Event, hold int64) map[string][]leaseOp {
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
		op.desc = fmt.Sprintf("%s %s %s token %d owner %.8s [%s, %s]", op.src, what, op.key, op.token, op.owner, at(op.call), at(op.ret))
		by[op.key] = append(by[op.key], op)
	}
	for _, e := range evs {
		op := leaseOp{key: e.Key, src: e.Src, owner: e.Owner, token: e.Token, call: e.T0, ret: e.T, hold: hold}
		switch e.Kind {
		case history.EvStoreAcquire:
			op.kind = leaseAcquire
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
			case strings.Contains(e.Err, "not held by this owner"):
				// the store said the grant was not its holder's: no effect
			default:
				op.maybe = true
				add(op, "release (outcome unknown: "+e.Err+")")
			}
		}
	}
	for _, k := range leaseKills(evs) {
		add(k, "killed, holding")
	}
	return by
}

// leaseKills are the maybe-releases a holder kill makes (F3, and F9 where
// it names holders): one per key the killed process acted on, from its
// last recorded event on the key before the kill (a release in flight
// then was sent after it) to the kill.
// A harness's halt of a holder (HaltMark) counts as its kill: the
// releases it sends on its way out may apply without a recorded return.
func leaseKills(evs []history.Event) []leaseOp {
	type kill struct {
		id string
		on int64
	}
	var kills []kill
	for _, ep := range episodes(evs) {
		if ep.fault == F3 || ep.fault == F9 {
			for _, id := range strings.Split(ep.target, ",") {
				kills = append(kills, kill{id, ep.on})
			}
		}
	}
	for id, on := range halted(evs) {
		kills = append(kills, kill{id, on})
	}
	var out []leaseOp
	for _, k := range kills {
		last := map[string]int64{}
		for _, e := range evs {
			if e.Src == k.id && e.Key != "" && e.T <= k.on {
				last[e.Key] = max(last[e.Key], e.T)
			}
		}
		for key, t := range last {
			out = append(out, leaseOp{kind: leaseKill, key: key, src: k.id, call: t, ret: max(t, k.on), maybe: true})
		}
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
