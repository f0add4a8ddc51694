package check_test

import (
	"testing"

	"github.com/leasehold-go/leasehold/faults/check"
	"github.com/leasehold-go/leasehold/faults/history"
)

// cliHistory is a synthetic CLI workload history: command a (token 1)
// writes at the given times, command b (token 2) starts at bStart.
func cliHistory(aWrites []int64, bStart int64) []history.Event {
	evs := []history.Event{{T0: 1, T: 1, Src: "c0.1", Kind: history.EvStart, Token: 1}}
	for _, w := range aWrites {
		evs = append(evs, history.Event{T0: w, T: w + 1, Src: "c0.1", Kind: history.EvFWrite, Token: 1})
	}
	evs = append(evs, history.Event{T0: bStart, T: bStart, Src: "c1.1", Kind: history.EvStart, Token: 2},
		history.Event{T0: bStart + 5, T: bStart + 6, Src: "c1.1", Kind: history.EvFWrite, Token: 2})
	history.Sort(evs)
	return evs
}

// The checker counts a write issued after the next holder's start, and
// only that.
func TestCheckCLI(t *testing.T) {
	var ok check.CLIResult
	check.CLI(cliHistory([]int64{10, 20, 30}, 100), &ok)
	if ok.AfterGrant != 0 || ok.Commands != 2 || ok.Writes != 4 || ok.Margin != 70 {
		t.Errorf("clean history: %+v", ok)
	}
	var bad check.CLIResult
	check.CLI(cliHistory([]int64{10, 20, 130, 150}, 100), &bad)
	if bad.AfterGrant != 2 || bad.Worst != 50 {
		t.Errorf("writes after the grant: %+v, want 2, the latest 50 ns late", bad)
	}
}
