package check

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"time"
)

// RunResult is the outcome of one run.
type RunResult struct {
	Store         string
	Seed          uint64
	TTL           time.Duration
	Seconds       float64 // wall time of the fault schedule and the quiet window
	Mutation      bool
	SafeTokens    bool
	TokenCaveat   string
	TakeoverBound float64 // ratio of the TTL
	// Holders and Keys are the run's holder processes and the keys they
	// contend for (0 in results recorded before they were: 3 and 2).
	Holders, Keys int
	Metrics       *Metrics
	Invalid       []string // why the run proves nothing (the faults did not bite)
	Missed        []string // targets the store claims and missed
	Notes         []string // faults skipped, and why
	Dir           string
	// Load is the machine's 1-minute load average at the start and the end
	// of the run (/proc/loadavg): the machine is shared, and a loaded one
	// stretches takeovers and pauses renewals.
	Load [2]float64
	// Commit is the commit the harness was built from ("" in results
	// recorded before it was, or from a build without VCS information).
	Commit string `json:",omitempty"`
}

// Judge decides validity and missed targets.
func Judge(r *RunResult) {
	m := r.Metrics
	if r.Mutation {
		if m.StaleAccepted == 0 && m.Linearizable != "Illegal" {
			r.Missed = append(r.Missed, "mutation not caught: the fence check was disabled and no stale write was reported")
		}
		if m.PauseSaves == 0 && m.StaleAccepted == 0 {
			r.Invalid = append(r.Invalid, "no stale write was attempted under the pauses")
		}
		return
	}
	if m.Episodes[F2] > 0 && m.PauseSaves == 0 {
		r.Invalid = append(r.Invalid, "the F2 pauses never produced a stale write attempt")
	}
	if m.Episodes[F5c] > 0 && m.LateCleanups == 0 {
		r.Invalid = append(r.Invalid, "the F5c lost replies never let a retry win the key before the late clean-up arrived")
	}
	if n := m.DoubleByFault[F5c]; n > 0 {
		r.Missed = append(r.Missed, fmt.Sprintf("concurrent holders under the late clean-up (F5c): %d", n))
	}
	// A consensus store must not grant a key twice when its members are
	// cut from each other: that is what the member partitions are for.
	for _, f := range []string{F13, F14, F15, F16} {
		if n := m.DoubleByFault[f]; n > 0 {
			r.Missed = append(r.Missed, fmt.Sprintf("concurrent holders under a member partition (%s): %d", f, n))
		}
	}
	if m.Episodes[F2] > 0 && m.LostUpdates == 0 && m.Overlaps == 0 {
		r.Invalid = append(r.Invalid, "the unfenced control showed no violation under pauses")
	}
	if r.SafeTokens {
		if m.StaleAccepted > 0 {
			r.Missed = append(r.Missed, fmt.Sprintf("stale writes accepted: %d", m.StaleAccepted))
		}
		if m.TokenBackwards+m.TokenRepeats > 0 {
			r.Missed = append(r.Missed, fmt.Sprintf("token regressions %d, repeats %d", m.TokenBackwards, m.TokenRepeats))
		}
		if m.Linearizable == "Illegal" {
			r.Missed = append(r.Missed, "fenced register history not linearizable")
		}
	}
	judgeLease(r)
	if m.FalseRefusals > 0 {
		r.Missed = append(r.Missed, fmt.Sprintf("fresh writes refused: %d", m.FalseRefusals))
	}
	if m.OpsAfterLoss+m.OpsAfterDeadline > 0 {
		r.Missed = append(r.Missed, fmt.Sprintf("operations after the holder's own loss signal %d, after its deadline %d", m.OpsAfterLoss, m.OpsAfterDeadline))
	}
	if len(m.Stuck) > 0 {
		r.Missed = append(r.Missed, "stuck keys: "+strings.Join(m.Stuck, "; "))
	}
	if len(m.Unreachable) > 0 {
		r.Missed = append(r.Missed, "store unreachable during the final probe: "+strings.Join(m.Unreachable, "; "))
	}
	if p99 := Quantile(m.Takeovers, 0.99); !math.IsNaN(p99) && p99 > r.TakeoverBound {
		r.Missed = append(r.Missed, fmt.Sprintf("takeover p99 %.2f x TTL above the bound %.2f", p99, r.TakeoverBound))
	}
	sort.Strings(r.Missed)
}
