// Package check holds the fault harness's checkers: pure functions from a
// run's history (package history) to its findings, with no process or
// network code, so that they can be tested on synthetic histories,
// including histories that must fail.
//
// Run runs the main workload's checkers (W1-W5, concurrent holders, the
// lease history and the accounting of the faults); Linearizable is W2's
// porcupine check, LeaseHistory the porcupine check of the lease history
// itself (a register per key with one live grant, leaselin.go); CLI is
// the CLI workload's check and StaleLandings W7's. Judge, JudgeCLI and JudgeStall turn the findings into a verdict:
// the targets a store missed, and the reasons a run proves nothing.
// Faults and CLIFaults are the fault classes the harness injects.
package check

import (
	"fmt"
	"time"
)

// Params are what the checkers need to know about a run besides its history.
type Params struct {
	TTL    time.Duration
	Rho    float64       // the holders' Options.Rho (0: leasehold.DefaultRho)
	Margin time.Duration // the holders' Options.Margin (0: leasehold.DefaultMargin)
	// QuietFrom is when the last fault had healed and settled: every key
	// must make progress (an admitted fenced write) between QuietFrom and
	// End, or it counts as stuck.
	QuietFrom, End int64
	// Final is the harness's own acquire of each key after every holder
	// was killed: a key it could not acquire within the bound is stuck;
	// one whose error is ErrProbeUnreachable found the store not
	// answering (a missed target, not a stuck key).
	Final map[string]error
	// LossFaults are the fault classes under which the store's design lets
	// it end a grant early (lose it, or expire it before its holder's
	// deadline): Redis restarted without its data, Redlock's split
	// majority, an advisory lock ended with its session. The lease-history
	// check lets an acquire in such a fault's window take over a live
	// grant (LeaseLoss). Nil: none, every overlap is a violation.
	LossFaults []string
}

// Metrics are the checkers' findings for one run. Counts with a target of 0
// are violations; the others are the denominators and the evidence that the
// faults bit.
type Metrics struct {
	// W3: every grant the store made (seen at the store level by a holder,
	// or by the harness's final probe).
	Grants         int
	TokenBackwards int // a grant whose token is not above one returned before it was asked for
	TokenRepeats   int // two different grants of one key with the same token

	// W2: the fenced register.
	FencedWrites  int    // writes that reached the fence
	StaleAccepted int    // admitted with a token below the highest admitted, or equal to it from another grant
	Saves         int    // refused as stale: the fence at work
	FalseRefusals int    // refused although the token was not stale (a resource bug)
	Linearizable  string // porcupine's verdict on the holders' view: Ok, Illegal or Unknown

	// Lease is the lease-history check (leaselin.go): the store's grants,
	// renewals and releases as a register per key, checked with porcupine.
	Lease LeaseVerdict

	// Protected operations (W4).
	Ops              int
	OpsAfterLoss     int // issued after the holder's own loss signal for the grant
	OpsAfterDeadline int // issued after the holder-side deadline (holders with a true clock)
	Losses           int // loss signals

	// Concurrent holders: a grant accepted by one holder while another
	// holder's lease on the key was still within its holder-side deadline
	// (computed from the true clock) and not released. The lease itself
	// failed to exclude; only the fence can save the resource then.
	DoubleGrants  int
	DoubleByFault map[string]int // the fault episode each one fell in (or "none")
	SpuriousF1    int            // losses of a holder paused for less than the renew margin (F1)

	// W1: the unfenced counter, the negative control.
	CounterWrites int
	LostUpdates   int
	Overlaps      int // read-modify-writes overlapped by another grant's on the same key

	// W5: liveness.
	Takeovers []float64 // time from a holder kill to the store's next grant to another holder, / TTL
	// TakeoversStalled are the takeovers during which the harness itself
	// was starved for more than a tenth of the TTL (EvStall): the machine
	// froze, not the store. They are reported, not held against the bound.
	TakeoversStalled []float64
	Stalls           int       // machine-wide stalls seen (history.EvStall)
	TakeoversClient  []float64 // the same, to the next lease a client accepted
	LateGrants       int       // grants a client refused because they arrived after its deadline
	Stuck            []string  // keys without progress after the faults healed
	// Unreachable are the keys whose final probe found the store not
	// answering (ErrProbeUnreachable), with the error: the store did not
	// come back, which says nothing of the key.
	Unreachable []string

	// Fault accounting.
	Episodes     map[string]int // fault class -> episodes injected
	PauseSaves   int            // stale writes refused during or just after F2 pauses
	BittenPauses int            // F2 episodes with at least one stale write attempted
	// LateCleanups are the F5c episodes where a retry of the holder whose
	// acquire reply was dropped won the key before its delayed requests
	// (the clean-up) reached the store; LateCleanupsSameOwner, those where
	// the retry used the lost acquire's owner id.
	LateCleanups          int
	LateCleanupsSameOwner int

	Violations []string // details of the first violations found, for the report
}

func (m *Metrics) violate(format string, a ...any) {
	if len(m.Violations) < 20 {
		m.Violations = append(m.Violations, fmt.Sprintf(format, a...))
	}
}
