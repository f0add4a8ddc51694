package check

import (
	"fmt"
	"math"
	"net/http"
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
// record with an unknown start and an open end (end): the weakest
// constraint, so it can only hide a violation, never invent one. It returns "Ok", "Illegal" or "Unknown"
// (timed out).
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
	used := map[string]bool{}
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
		ops = append(ops, porcupine.Operation{
			Input: regInput{e.Key, e.Token, e.Owner}, Call: e.T0, Output: out, Return: e.T,
		})
	}
	for req, d := range decided {
		if used[req] {
			continue
		}
		ops = append(ops, porcupine.Operation{
			Input: regInput{d.Key, d.Token, d.Owner}, Call: 0, Output: d.Kind == history.EvAdmit, Return: end,
		})
	}
	return string(porcupine.CheckOperationsTimeout(FencedRegisterModel, ops, 30*time.Second))
}
