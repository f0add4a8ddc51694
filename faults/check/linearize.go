package check

import (
	"fmt"
	"math"
	"net/http"
	"sort"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/leasehold-go/leasehold/faults/history"
)

// regInput is a fenced write: its token and its grant's owner.
type regInput struct {
	key   string
	token uint64
	owner string
}

// regState is the model's state: the highest admitted token and its owner.
type regState struct {
	hi    uint64
	owner string
}

// FencedRegisterModel is the porcupine model of a fenced register: a write
// is admitted (output true) exactly when its token is above the highest
// admitted so far, or equal to it from the same grant; otherwise it is
// refused (output false) and changes nothing. A history that admitted a
// stale write, or a write with a token another grant already used, has no
// linearization under this model.
var FencedRegisterModel = porcupine.Model{
	Partition: func(h []porcupine.Operation) [][]porcupine.Operation {
		by := map[string][]porcupine.Operation{}
		var keys []string
		for _, op := range h {
			k := op.Input.(regInput).key
			if _, ok := by[k]; !ok {
				keys = append(keys, k)
			}
			by[k] = append(by[k], op)
		}
		out := make([][]porcupine.Operation, 0, len(keys))
		for _, k := range keys {
			out = append(out, by[k])
		}
		return out
	},
	Init: func() any { return regState{} },
	Step: func(state, input, output any) (bool, any) {
		s, in, admitted := state.(regState), input.(regInput), output.(bool)
		fresh := in.token > s.hi || (in.token == s.hi && (s.hi == 0 || in.owner == s.owner))
		if admitted {
			if !fresh {
				return false, s
			}
			return true, regState{hi: in.token, owner: in.owner}
		}
		return !fresh, s
	},
	Equal: func(a, b any) bool { return a.(regState) == b.(regState) },
	DescribeOperation: func(input, output any) string {
		in := input.(regInput)
		return fmt.Sprintf("write(%s, token %d, owner %.8s) -> admitted=%v", in.key, in.token, in.owner, output)
	},
}

// Linearizable checks the holders' view of the fenced register
// with porcupine: each write's interval runs from when the holder sent it
// to when it got the answer. A write the resource decided but whose holder
// never saw the answer (killed meanwhile) is taken from the resource's
// record, and every interval is narrowed to the resource's window for the
// decision: after the resource's previous record on that key, no later
// than its own. The resource decides and stamps its record in one
// critical section, so the decision lies in that window. Only an
// unanswered write whose record has no time ends at end. (end is not a
// bound on the decisions: the holders keep writing after the quiet window's end until they are killed, and a
// decision after end given end as its return would be forced before
// writes that in fact preceded it, an Illegal the fence did not cause.)
// It returns "Ok", "Illegal" or "Unknown" (timed out).
func Linearizable(evs []history.Event, end int64) string {
	if end == 0 {
		end = math.MaxInt64 / 2
	}
	decided := map[string]history.Event{}
	for _, e := range evs {
		if (e.Kind == history.EvAdmit || e.Kind == history.EvFenced) && e.Req != "" {
			decided[e.Req] = e
		}
	}
	var ops []porcupine.Operation
	used, since := map[string]bool{}, previousDecision(evs)
	for _, e := range evs {
		if e.Kind != history.EvFWrite {
			continue
		}
		d, ok := decided[e.Req]
		if !ok {
			continue // never reached the fence: no effect
		}
		used[e.Req] = true
		out := d.Kind == history.EvAdmit
		switch e.Status {
		case http.StatusNoContent:
			out = true
		case http.StatusConflict:
			out = false
		}
		call, ret := within(e.T0, e.T, since[e.Req], d.T)
		ops = append(ops, porcupine.Operation{
			Input: regInput{e.Key, e.Token, e.Owner}, Call: call, Output: out, Return: ret,
		})
	}
	for req, d := range decided {
		if used[req] {
			continue
		}
		call, ret := within(0, math.MaxInt64/2, since[req], d.T)
		if d.T == 0 {
			ret = end
		}
		ops = append(ops, porcupine.Operation{
			Input: regInput{d.Key, d.Token, d.Owner}, Call: call, Output: d.Kind == history.EvAdmit, Return: ret,
		})
	}
	return string(porcupine.CheckOperationsTimeout(FencedRegisterModel, ops, 30*time.Second))
}

// within narrows a write's interval [call, ret] (the holder's, or
// an open one when no holder saw the answer) to the resource's window for its
// decision: after prev, the resource's previous record on that key, and
// no later than at, its own record. A record without a time, or a window
// that does not meet the interval, leaves the interval as it was.
func within(call, ret, prev, at int64) (int64, int64) {
	if at == 0 {
		return call, ret
	}
	c, r := max(call, prev+1), min(ret, at)
	if c > r {
		return call, ret
	}
	return c, r
}

// previousDecision maps each decided write's request to the time of the
// resource's decision on the same key just before it (0 for the first):
// the resource decides a key's writes one at a time, each recorded before
// the next is decided, so a decision lies after the previous record.
func previousDecision(evs []history.Event) map[string]int64 {
	var ds []history.Event
	for _, e := range evs {
		if (e.Kind == history.EvAdmit || e.Kind == history.EvFenced) && e.T != 0 {
			ds = append(ds, e)
		}
	}
	sort.SliceStable(ds, func(i, j int) bool { return ds[i].T < ds[j].T })
	last := map[string]int64{}
	out := make(map[string]int64, len(ds))
	for _, d := range ds {
		if d.Req != "" {
			out[d.Req] = last[d.Key]
		}
		last[d.Key] = d.T
	}
	return out
}
