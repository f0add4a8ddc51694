package faults

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"sort"
	"strings"
	"time"
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

	Sum       Metrics   // counts summed over the regular runs
	Takeovers []float64 // pooled
	Stalled   []float64 // takeovers excluded: the machine stalled during them
	Episodes  map[string]int
	Notes     []string

	LoadMin, LoadMax float64 // 1-minute load averages seen at the runs' starts and ends

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

// Record is one line of a suite's results file: a run's result, or the
// error of a run that could not be made.
type Record struct {
	Store  string       `json:"store"`
	Result *RunResult   `json:"result,omitempty"`
	Stall  *StallResult `json:"stall,omitempty"` // a W7 run
	CLI    *CLIResult   `json:"cli,omitempty"`   // a run of the CLI workload
	Error  string       `json:"error,omitempty"`
}

// ReadRecords reads the runs of a results file written by the suite, and
// the errors of runs that could not be made, per store.
func ReadRecords(path string) ([]*RunResult, map[string][]string, error) {
	recs, err := readRecordFile(path)
	if err != nil {
		return nil, nil, err
	}
	var rs []*RunResult
	errs := map[string][]string{}
	for _, r := range recs {
		switch {
		case r.Result != nil:
			rs = append(rs, r.Result)
		case r.Error != "":
			errs[r.Store] = append(errs[r.Store], r.Error)
		}
	}
	return rs, errs, nil
}

// readRecordFile reads every line of a results file.
func readRecordFile(path string) ([]Record, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var out []Record
	for i, line := range strings.Split(string(b), "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		var r Record
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			return nil, fmt.Errorf("%s line %d: %w", path, i+1, err)
		}
		out = append(out, r)
	}
	return out, nil
}

// Aggregate pools results by store, in BackendNames order.
func Aggregate(results []*RunResult, errs map[string][]string) []*StoreSummary {
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
		for _, n := range r.Notes {
			if !containsStr(s.Notes, n) {
				s.Notes = append(s.Notes, n)
			}
		}
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
	}
	for store, es := range errs {
		s := get(store)
		s.Errors = append(s.Errors, es...)
	}
	var out []*StoreSummary
	for _, name := range BackendNames {
		if s := by[name]; s != nil {
			if p99 := Quantile(s.Takeovers, 0.99); !math.IsNaN(p99) && p99 > s.TakeoverBound {
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

func addMetrics(a *Metrics, m *Metrics) {
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

// Failed reports whether the store missed a target it claims, had an
// invalid run, or could not be run.
func (s *StoreSummary) Failed() bool {
	return len(s.Missed) > 0 || s.InvalidRuns > 0 || len(s.Errors) > 0
}

// scope is the "(runs x seconds, seed)" part of every figure.
func (s *StoreSummary) scope() string {
	return fmt.Sprintf("%d x %.0f s, %s", s.Runs, s.Seconds, seedList(s.Seeds))
}

func seedList(seeds []uint64) string {
	if len(seeds) == 0 {
		return "no seed"
	}
	ss := append([]uint64(nil), seeds...)
	sort.Slice(ss, func(i, j int) bool { return ss[i] < ss[j] })
	contiguous := true
	for i := 1; i < len(ss); i++ {
		if ss[i] != ss[i-1]+1 {
			contiguous = false
		}
	}
	switch {
	case len(ss) == 1:
		return fmt.Sprintf("seed %d", ss[0])
	case contiguous:
		return fmt.Sprintf("seeds %d-%d", ss[0], ss[len(ss)-1])
	}
	parts := make([]string, len(ss))
	for i, x := range ss {
		parts[i] = fmt.Sprint(x)
	}
	return "seeds " + strings.Join(parts, ",")
}

// fig renders "value (N, runs x seconds, seed)".
func (s *StoreSummary) fig(value string, n int, of string) string {
	return fmt.Sprintf("%s of %s %s (%s)", value, commas(n), of, s.scope())
}

func commas(n int) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// Markdown renders the safety table, the W7 table (stalls: the
// fence.Middleware workload's runs, if any) and the per-store details. mode
// and command say how the figures were produced.
func Markdown(sums []*StoreSummary, stalls []*StallResult, mode, command string, when time.Time) string {
	var b strings.Builder
	w := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	w("# Safety under faults\n\n")
	w("<!-- Generated by %s on %s. Do not edit by hand. -->\n\n", command, when.UTC().Format("2006-01-02 15:04 MST"))
	w("These figures come from the fault-injection harness in `faults/` (%s mode), run against the real servers\n", mode)
	w("on one 2-core Linux machine shared with other work. Reproduce them with:\n\n    %s\n\n", command)
	w("Each figure reads *value of N (runs x seconds per run, seeds)*. Zero failures in N trials bounds the\n")
	w("rate at about 3/N. What the workloads (W1-W5, W7) and faults (F1-F12) are is explained below the tables.\n\n")
	w("## Targets\n\n")
	w("| store | tokens claimed safe | stale writes accepted (W2) | token regressions (W3) | ops after own loss signal (W4) | takeover after kill p50 / p99 (W5) | stuck keys | unfenced control bit (W1) | mutation caught | concurrent holders (the lease alone) | verdict |\n")
	w("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n")
	for _, s := range sums {
		if s.Runs == 0 {
			w("| %s | | | | | | | | | | could not run: %s |\n", s.Store, mdEscape(strings.Join(s.Errors, "; ")))
			continue
		}
		m := &s.Sum
		claim := "yes"
		if !s.SafeTokens {
			claim = "**no**"
		}
		stale := s.fig(fmt.Sprint(m.StaleAccepted), m.FencedWrites, "fenced writes")
		regress := s.fig(fmt.Sprint(m.TokenBackwards+m.TokenRepeats), m.Grants, "grants")
		if !s.SafeTokens {
			stale += " (not claimed)"
			regress += " (not claimed)"
		}
		ops := s.fig(fmt.Sprint(m.OpsAfterLoss+m.OpsAfterDeadline), m.Ops, "operations")
		take := fmt.Sprintf("%s / %s x TTL (bound %.2f; %d kills, %s)", fmtRatio(Quantile(s.Takeovers, 0.5)), fmtRatio(Quantile(s.Takeovers, 0.99)),
			s.TakeoverBound, len(s.Takeovers), s.scope())
		if len(s.Stalled) > 0 {
			take += fmt.Sprintf("; %d more during machine stalls, max %s", len(s.Stalled), fmtRatio(Quantile(s.Stalled, 1)))
		}
		stuck := s.fig(fmt.Sprint(len(m.Stuck)), s.Runs*2, "keys checked")
		control := fmt.Sprintf("%d of %d runs (%s lost updates, %s overlapping writes)", s.ControlRuns, s.Runs, commas(m.LostUpdates), commas(m.Overlaps))
		mut := "not run"
		if s.MutationRuns > 0 {
			mut = fmt.Sprintf("%d of %d runs (%d stale writes admitted, %s)", s.MutationCaught, s.MutationRuns, s.MutationStale, seedList(s.MutationSeeds))
		}
		verdict := "meets every claimed target"
		switch {
		case len(s.Missed) > 0:
			verdict = "**misses**: " + strings.Join(s.Missed, "; ")
		case s.InvalidRuns > 0:
			verdict = fmt.Sprintf("**invalid**: %d runs where the faults did not bite", s.InvalidRuns)
		}
		if !s.SafeTokens && len(s.Missed) == 0 && s.InvalidRuns == 0 {
			verdict += "; its tokens are not fences"
		}
		double := s.fig(fmt.Sprint(m.DoubleGrants), m.Grants, "grants") + byFault(m.DoubleByFault)
		w("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", s.Store, claim, stale, regress, ops, take, stuck, control, mut, double, mdEscape(verdict))
	}
	w("%s", stallMarkdown(stalls))
	w("\n## Details per store\n")
	for _, s := range sums {
		if s.Runs == 0 {
			continue
		}
		m := &s.Sum
		w("\n### %s\n\n", s.Store)
		w("- Runs: %s, TTL %s, 3 holder processes contending for 2 keys; machine load average %.1f-%.1f on 2 cores.\n", s.scope(), s.TTL, s.LoadMin, s.LoadMax)
		if s.TokenCaveat != "" {
			w("- Token caveat (from the store's Info): %s\n", mdEscape(s.TokenCaveat))
		}
		var eps []string
		for _, c := range FaultClasses {
			if n := s.Episodes[c]; n > 0 {
				eps = append(eps, fmt.Sprintf("%s x%d", c, n))
			}
		}
		w("- Faults injected: %s.\n", strings.Join(eps, ", "))
		w("- W2 fenced register: %s writes, %s refused as stale (the fence at work; %s of them during or just after F2 pauses, %d of %d pauses bitten), %d stale admitted, %d fresh refused; porcupine: %s.\n",
			commas(m.FencedWrites), commas(m.Saves), commas(m.PauseSaves), m.BittenPauses, s.Episodes["F2"], m.StaleAccepted, m.FalseRefusals, m.Linearizable)
		w("- W3 tokens: %s grants, %d went backwards, %d repeated.\n", commas(m.Grants), m.TokenBackwards, m.TokenRepeats)
		w("- Concurrent holders (a lease accepted while another was within its deadline): %d%s.\n", m.DoubleGrants, byFault(m.DoubleByFault))
		if n := s.Episodes["F5c"]; n > 0 {
			w("- F5c late clean-up: in %d of %d episodes a retry won the key before the lost acquire's delayed clean-up reached the store (%d of them with the lost acquire's owner id); concurrent holders under F5c: %d.\n",
				m.LateCleanups, n, m.LateCleanupsSameOwner, m.DoubleByFault["F5c"])
		}
		w("- W4 protected operations: %s, %d issued after the holder's own loss signal, %d after its own deadline; %s loss signals in all, %d under F1 pauses (spurious).\n",
			commas(m.Ops), m.OpsAfterLoss, m.OpsAfterDeadline, commas(m.Losses), m.SpuriousF1)
		w("- W1 unfenced counter (negative control): %s writes, %s lost updates, %s overlapping read-modify-writes; violations in %d of %d runs.\n",
			commas(m.CounterWrites), commas(m.LostUpdates), commas(m.Overlaps), s.ControlRuns, s.Runs)
		w("- W5 takeover after a holder kill: store grant %s, client lease %s; %s grants refused by the client as arriving after its deadline.\n",
			ratios(s.Takeovers), ratios(m.TakeoversClient), commas(m.LateGrants))
		w("- Machine stalls (the harness's own 10 ms ticker late by over %s): %d; takeovers that overlapped one by over a tenth of the TTL, reported apart and not held against the bound: %s.\n",
			stallThreshold, m.Stalls, ratios(s.Stalled))
		for _, n := range s.Notes {
			w("- %s\n", mdEscape(n))
		}
		for _, x := range s.Missed {
			w("- **Missed**: %s\n", mdEscape(x))
		}
		for _, x := range s.Invalid {
			w("- **Invalid run**: %s\n", mdEscape(x))
		}
		if len(m.Violations) > 0 {
			w("- Findings, for inspection (the first of each run; a target missed is listed above as **Missed**, the rest are the figures above):\n")
		}
		for _, v := range m.Violations {
			w("  - %s\n", mdEscape(v))
		}
	}
	w("\n## What is measured\n\n")
	w("Holder processes (the harness binary re-executed) contend for the keys through `leasehold.Client` and, while they\n")
	w("hold a key, run protected operations on a resource served by the harness: each passes `Lease.Checkpoint`, reads\n")
	w("the counter, works for TTL/5, then writes the counter back unfenced (W1) and writes a fenced register with the\n")
	w("lease's token in the `Fencing-Token` header (W2; `fence.Middleware`, admitting tokens >= the highest seen). The\n")
	w("writes are not re-checked against the lease after the work step: that is the application a pause catches between\n")
	w("its check and its write, the case fencing exists for.\n\n")
	w("- **W1** lost updates and overlapping read-modify-writes on the unfenced counter. It must show violations under\n")
	w("  pauses (the negative control); a run where it does not is invalid.\n")
	w("- **W2** stale writes admitted, from an exact scan of the resource's admission order (a write below the highest\n")
	w("  admitted token, or equal to it from another grant), and a porcupine linearizability check of the holders' view\n")
	w("  against a fenced-register model. A run whose long pauses produced no stale write attempt is invalid.\n")
	w("- **W3** tokens that went backwards in real-time order or were given to two grants, over every grant the store made.\n")
	w("- **W4** operations issued after the holder's own loss signal (its lease context ended), or after its holder-side\n")
	w("  deadline computed from its last successful acquire or renew.\n")
	w("- **Concurrent holders**: a lease a client accepted while another holder's lease on the key was still within\n")
	w("  its own deadline (its last successful acquire or renew, sent at t, holds until t + TTL x 0.99 - 5 ms) and\n")
	w("  was neither released nor killed. A correct store never grants a key before the previous grant's TTL has\n")
	w("  passed by its clock, so each one is the lease itself failing to exclude, attributed to the fault it fell in;\n")
	w("  only the fence keeps the resource safe then. Not a target (a figure users need to pick a store), except\n")
	w("  under F5c: a clean-up that reaches the store late must never clear a later grant, so there it must be 0.\n")
	w("- **W5** time from a holder's SIGKILL to the store's next grant of its keys to another holder, as a ratio of the\n")
	w("  TTL, against the store's documented bound; keys without progress after the faults healed, or that a fresh\n")
	w("  client could not acquire within the bound after every holder was killed.\n")
	w("- **Mutation**: a run with the resource's fence check disabled; the checkers must report stale writes every time.\n")
	w("- **W7** `fence.Middleware` under writers that stall between admission and write (its own table above): writes\n")
	w("  that landed with a token below a write already landed on the key, with the default options (target 0) and with\n")
	w("  `UnsafeConcurrent` (the negative control, which must land some; a run where it does not is invalid).\n\n")
	w("Faults:\n\n")
	for _, c := range FaultClasses {
		w("- **%s** %s.\n", c, FaultNames[c])
	}
	w("\nNetwork faults go through a TCP proxy the harness runs between each holder and each store server; for the\n")
	w("embedded store, which has no network, F6 blocks the holder's store calls inside the holder process instead.\n")
	return b.String()
}

// byFault renders counts per fault class: " (F9b: 2, F11: 1)".
func byFault(m map[string]int) string {
	if len(m) == 0 {
		return ""
	}
	var parts []string
	for _, c := range append(append([]string(nil), FaultClasses...), "none") {
		if n := m[c]; n > 0 {
			parts = append(parts, fmt.Sprintf("%s: %d", c, n))
		}
	}
	return " (" + strings.Join(parts, ", ") + ")"
}

func mdEscape(s string) string {
	s = strings.ReplaceAll(s, "|", "\\|")
	return strings.ReplaceAll(s, "\n", " ")
}
