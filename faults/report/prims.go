package report

import (
	"fmt"
	"strings"
	"time"

	"github.com/leasehold-go/leasehold/faults/check"
)

// ReadPrimRecords reads the W8 and W9 results from a results file written
// by the suite.
func ReadPrimRecords(path string) ([]*check.PrimResult, error) {
	return readKind(path, func(r Record) *check.PrimResult { return r.Prim })
}

// PrimMarkdown renders W8 (the semaphore) and W9 (the read-write lock), a
// row per store and workload with the regular runs and the mutation runs
// apart, in the order of stores; "" when there are none.
func PrimMarkdown(rs []*check.PrimResult, stores []string) string {
	if len(rs) == 0 {
		return ""
	}
	var b strings.Builder
	w := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	w("\n## Semaphores and read-write locks (W8, W9)\n\n")
	w("W8: holder processes (N+2 of them) take permits of one `semaphore` of N = 3 slots and write to a resource\n")
	w("fenced per slot key; W9: three readers and two writers take one `rwlock`, and the resource checks every\n")
	w("read and write with an `rwlock.Guard` (the sequencer). Each operation checks its hold, then works before its\n")
	w("write, so a pause there makes a stale write attempt. Faults: F2 (a holder paused in its work step, past the\n")
	w("takeover bound), F3 (a holder killed and respawned), and F8 and F9 (the store paused, restarted) where the\n")
	w("store has them. Holds are judged by the holders' own deadlines (a hold ends at its release, its holder's\n")
	w("deadline or its holder's kill). Targets: W8, never more than N holders at once nor a slot held twice, each\n")
	w("slot's tokens increasing; W9, never a reader with a writer nor two writers, a waiting writer gets in (its\n")
	w("longest wait under the bound shown); both, 0 stale writes admitted. The mutation runs break the primitive\n")
	w("(W8: N+1 slots; W9: writers that take the gate and ignore readers) and disable the fence: CAUGHT is the check\n")
	w("seeing the violation.\n\n")
	w("| store | workload | runs | fault episodes | holds | writes admitted | stale refused / admitted | over N / slot twice / writer overlaps | tokens backwards | writer holds, longest wait | verdict |\n")
	w("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n")
	for _, name := range stores {
		for _, wl := range []string{"W8", "W9"} {
			for _, mut := range []bool{false, true} {
				primRow(w, rs, name, wl, mut)
			}
		}
	}
	return b.String()
}

// primRow writes the row of store name's runs of workload wl (mutation or
// not), if it has any.
func primRow(w func(string, ...any), rs []*check.PrimResult, name, wl string, mut bool) {
	var sum check.PrimResult
	eps := map[string]int{}
	runs, caught := 0, 0
	var bad []string
	for _, r := range rs {
		if r.Store != name || r.Workload != wl || r.Mutation != mut {
			continue
		}
		runs++
		sum.Holds += r.Holds
		sum.Writes += r.Writes
		sum.StaleRefused += r.StaleRefused
		sum.StaleAdmit += r.StaleAdmit
		sum.OverAdmit += r.OverAdmit
		sum.SlotTwice += r.SlotTwice
		sum.Conflicts += r.Conflicts
		sum.TokensBackward += r.TokensBackward
		sum.WriterHolds += r.WriterHolds
		sum.LongestWait = max(sum.LongestWait, r.LongestWait)
		sum.StarveBound = max(sum.StarveBound, r.StarveBound)
		for c, n := range r.Episodes {
			eps[c] += n
		}
		if r.Caught {
			caught++
		}
		bad = append(append(bad, r.Missed...), r.Invalid...)
	}
	if runs == 0 {
		return
	}
	var fs []string
	for _, c := range []string{check.F2, check.F3, check.F8, check.F9} {
		if eps[c] > 0 {
			fs = append(fs, fmt.Sprintf("%s x%d", c, eps[c]))
		}
	}
	label, verdict := wl, "ok"
	if mut {
		label += " mutation"
		verdict = fmt.Sprintf("CAUGHT in %d of %d", caught, runs)
	}
	if len(bad) > 0 {
		verdict = mdEscape(strings.Join(bad, "; "))
	}
	writers := "-"
	if wl == "W9" {
		writers = fmt.Sprintf("%d, %s (bound %s)", sum.WriterHolds, sum.LongestWait.Round(time.Millisecond), sum.StarveBound.Round(time.Millisecond))
	}
	w("| %s | %s | %d | %s | %d | %d | %d / %d | %d / %d / %d | %d | %s | %s |\n", name, label, runs, strings.Join(fs, ", "),
		sum.Holds, sum.Writes, sum.StaleRefused, sum.StaleAdmit, sum.OverAdmit, sum.SlotTwice, sum.Conflicts, sum.TokensBackward, writers, verdict)
}

// PrimSummary is one line about a W8 or W9 run.
func PrimSummary(r *check.PrimResult) string {
	verdict := "ok"
	if r.Mutation {
		verdict = "CAUGHT"
	}
	status := runStatus(r.Missed, r.Invalid, verdict)
	kind := r.Workload
	if r.Mutation {
		kind += " mutation"
	}
	return fmt.Sprintf("%-18s %s  seed %d  TTL %s  %.0f s: %d holds, %d writes, stale refused %d admitted %d, over N %d, slot twice %d, writer overlaps %d, tokens backwards %d, writer holds %d (longest wait %s): %s",
		r.Store, kind, r.Seed, r.TTL, r.Seconds, r.Holds, r.Writes, r.StaleRefused, r.StaleAdmit, r.OverAdmit, r.SlotTwice, r.Conflicts,
		r.TokensBackward, r.WriterHolds, r.LongestWait.Round(time.Millisecond), status)
}

// runStatus is a one-run summary's verdict: its missed targets, else why
// it was invalid, else ok.
func runStatus(missed, invalid []string, ok string) string {
	switch {
	case len(missed) > 0:
		return "MISSED: " + strings.Join(missed, "; ")
	case len(invalid) > 0:
		return "INVALID: " + strings.Join(invalid, "; ")
	}
	return ok
}
