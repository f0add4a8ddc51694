package report

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/leasehold-go/leasehold/faults/check"
)

// StoreSummary pools the runs of one store.
type StoreSummary struct {
	Store         string
	Runs          int     // regular runs (not mutation)
	Seconds       float64 // seconds per run (the longest)
	Seeds         []uint64
	TTL           time.Duration
	SafeTokens    bool
	TokenCaveat   string
	TakeoverBound float64

	Sum       check.Metrics // counts summed over the regular runs
	Lease     LeaseTally    // the lease-history check over the regular runs
	Takeovers []float64     // pooled
	Stalled   []float64     // takeovers excluded: the machine stalled during them
	Episodes  map[string]int
	Notes     []string
	Commits   []string // the commits the runs were made at, where they say (RunResult.Commit)

	LoadMin, LoadMax float64 // 1-minute load averages seen at the runs' starts and ends
	Holders, Keys    int     // the last run's workload (3 and 2 before results recorded it)

	InvalidRuns    int // runs whose faults did not bite
	ControlRuns    int // runs whose unfenced control showed violations
	MutationRuns   int // mutation runs
	MutationCaught int // mutation runs caught
	MutationStale  int // stale writes admitted in the mutation runs
	MutationSeeds  []uint64
	Missed         []string // targets the store claims and missed, pooled
	Invalid        []string
	Errors         []string // runs that failed to run (a store that would not start)
}

// Aggregate pools results by store, with the stores in the order of
// stores (the harness's harness.BackendNames); a store not in it is left
// out.
func Aggregate(results []*check.RunResult, errs map[string][]string, stores []string) []*StoreSummary {
	by := map[string]*StoreSummary{}
	get := func(store string) *StoreSummary {
		s := by[store]
		if s == nil {
			s = &StoreSummary{Store: store, Episodes: map[string]int{}}
			by[store] = s
		}
		return s
	}
	for _, r := range results {
		s := get(r.Store)
		if r.Mutation {
			s.MutationRuns++
			s.MutationSeeds = append(s.MutationSeeds, r.Seed)
			s.MutationStale += r.Metrics.StaleAccepted
			if len(r.Missed) == 0 {
				s.MutationCaught++
			}
			continue
		}
		m := r.Metrics
		s.Runs++
		s.Seeds = append(s.Seeds, r.Seed)
		s.Seconds = math.Max(s.Seconds, r.Seconds)
		s.TTL, s.SafeTokens, s.TokenCaveat, s.TakeoverBound = r.TTL, r.SafeTokens, r.TokenCaveat, r.TakeoverBound
		s.Holders, s.Keys = cmp.Or(r.Holders, 3), cmp.Or(r.Keys, 2) // 3 x 2 before results recorded them
		s.Takeovers = append(s.Takeovers, m.Takeovers...)
		s.Stalled = append(s.Stalled, m.TakeoversStalled...)
		for _, l := range r.Load {
			if s.LoadMax == 0 || l < s.LoadMin {
				s.LoadMin = l
			}
			s.LoadMax = math.Max(s.LoadMax, l)
		}
		for c, n := range m.Episodes {
			s.Episodes[c] += n
		}
		s.addNotes(r)
		if len(r.Invalid) > 0 {
			s.InvalidRuns++
			for _, x := range r.Invalid {
				s.Invalid = append(s.Invalid, fmt.Sprintf("seed %d: %s", r.Seed, x))
			}
		}
		if m.LostUpdates > 0 || m.Overlaps > 0 {
			s.ControlRuns++
		}
		for _, x := range r.Missed {
			if strings.HasPrefix(x, "takeover p99") {
				continue // judged on the pooled samples below
			}
			s.Missed = append(s.Missed, fmt.Sprintf("seed %d: %s", r.Seed, x))
		}
		addMetrics(&s.Sum, m)
		s.Lease.add(r)
	}
	for store, es := range errs {
		s := get(store)
		s.Errors = append(s.Errors, es...)
	}
	var out []*StoreSummary
	for _, name := range stores {
		if s := by[name]; s != nil {
			if p99 := check.Quantile(s.Takeovers, 0.99); !math.IsNaN(p99) && p99 > s.TakeoverBound {
				s.Missed = append(s.Missed, fmt.Sprintf("takeover p99 %s x TTL above the bound %.2f", fmtRatio(p99), s.TakeoverBound))
			}
			if s.MutationRuns > s.MutationCaught {
				s.Missed = append(s.Missed, fmt.Sprintf("mutation caught in only %d of %d runs", s.MutationCaught, s.MutationRuns))
			}
			out = append(out, s)
		}
	}
	return out
}

func addMetrics(a *check.Metrics, m *check.Metrics) {
	a.Grants += m.Grants
	a.TokenBackwards += m.TokenBackwards
	a.TokenRepeats += m.TokenRepeats
	a.FencedWrites += m.FencedWrites
	a.StaleAccepted += m.StaleAccepted
	a.Saves += m.Saves
	a.FalseRefusals += m.FalseRefusals
	if m.Linearizable != "Ok" && a.Linearizable != "Illegal" {
		a.Linearizable = m.Linearizable
	} else if a.Linearizable == "" {
		a.Linearizable = m.Linearizable
	}
	a.Ops += m.Ops
	a.OpsAfterLoss += m.OpsAfterLoss
	a.OpsAfterDeadline += m.OpsAfterDeadline
	a.Losses += m.Losses
	a.SpuriousF1 += m.SpuriousF1
	a.CounterWrites += m.CounterWrites
	a.LostUpdates += m.LostUpdates
	a.Overlaps += m.Overlaps
	a.TakeoversClient = append(a.TakeoversClient, m.TakeoversClient...)
	a.LateGrants += m.LateGrants
	a.Stalls += m.Stalls
	a.DoubleGrants += m.DoubleGrants
	for f, n := range m.DoubleByFault {
		if a.DoubleByFault == nil {
			a.DoubleByFault = map[string]int{}
		}
		a.DoubleByFault[f] += n
	}
	a.Stuck = append(a.Stuck, m.Stuck...)
	a.Unreachable = append(a.Unreachable, m.Unreachable...)
	a.PauseSaves += m.PauseSaves
	a.BittenPauses += m.BittenPauses
	a.LateCleanups += m.LateCleanups
	a.LateCleanupsSameOwner += m.LateCleanupsSameOwner
	for _, v := range m.Violations {
		if len(a.Violations) < 10 {
			a.Violations = append(a.Violations, v)
		}
	}
}

// addNotes pools r's notes and commit into s's, once each.
func (s *StoreSummary) addNotes(r *check.RunResult) {
	if r.Commit != "" && !slices.Contains(s.Commits, r.Commit) {
		s.Commits = append(s.Commits, r.Commit)
	}
	for _, n := range r.Notes {
		if !slices.Contains(s.Notes, n) {
			s.Notes = append(s.Notes, n)
		}
	}
}

// Failed reports whether the store missed a target it claims, had an
// invalid run, or could not be run.
func (s *StoreSummary) Failed() bool {
	return len(s.Missed) > 0 || s.InvalidRuns > 0 || len(s.Errors) > 0
}
