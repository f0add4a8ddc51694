package bench

import (
	"fmt"
	"io"
	"strconv"
	"time"
)

// WritePrimsTable writes one row per store and side: the median cycle's
// time, its ratio over the plain cycle's (measured in turn with it),
// the store calls per cycle; then one row per store of the semaphore's
// hand-off among contenders. A partial result's store is marked with an
// asterisk.
func WritePrimsTable(w io.Writer, rs []PrimResult, f Format) error {
	t := &table{
		head:  []string{"store", "cycle", "µs per cycle", "over plain", "store calls per cycle", "cycles"},
		right: []bool{false, false, true, true, true, true},
	}
	for _, r := range rs {
		for _, s := range r.Sides {
			t.add(primName(r), s.Name, fmtUS(s.Cycle), strconv.FormatFloat(s.OverPlain, 'f', 2, 64)+"x",
				strconv.FormatFloat(s.Calls, 'f', 1, 64), fmtInt(s.Cycles))
		}
	}
	if err := t.write(w, f); err != nil {
		return err
	}
	if _, err := io.WriteString(w, "\n"); err != nil {
		return err
	}
	h := &table{
		head:  []string{"store", "notifies", "slots", "contenders", "hand-offs", "handoff p50 ms", "p99", "attempts per hand-off", "errors"},
		right: []bool{false, false, true, true, true, true, true, true, true},
	}
	for _, r := range rs {
		h.add(primName(r), yesNo(r.Notifier), strconv.Itoa(r.Slots), strconv.Itoa(r.Contenders), fmtInt(int64(r.Handoff.N)),
			fmtMS(r.Handoff.P50), fmtMS(r.Handoff.P99), strconv.FormatFloat(r.AttemptsPerHandoff, 'f', 1, 64), fmtInt(r.Errors))
	}
	return h.write(w, f)
}

// WritePrimsSummary writes the "SUMMARY <id> <value>" lines that
// scripts/bench-page reads for its table of goals, for each result r and
// its store's id (r.Store in lower case, dashes for the rest):
// sem-free-over-plain-ID, sem-busy-over-plain-ID, rw-read-over-plain-ID,
// rw-write-over-plain-ID (time per cycle over the plain cycle's), and
// sem-handoff-p50-ms-ID, sem-handoff-p99-ms-ID.
func WritePrimsSummary(w io.Writer, rs []PrimResult) error {
	ids := map[string]string{SideSemFree: "sem-free-over-plain", SideSemBusy: "sem-busy-over-plain",
		SideRead: "rw-read-over-plain", SideWrite: "rw-write-over-plain"}
	for _, r := range rs {
		id := primID(r.Store)
		for _, s := range r.Sides {
			if p, ok := ids[s.Name]; ok && s.Cycles > 0 {
				if _, err := fmt.Fprintf(w, "SUMMARY %s-%s %.3f\n", p, id, s.OverPlain); err != nil {
					return err
				}
			}
		}
		if r.Handoff.N > 0 {
			if _, err := fmt.Fprintf(w, "SUMMARY sem-handoff-p50-ms-%s %.3f\nSUMMARY sem-handoff-p99-ms-%s %.3f\n",
				id, ms(r.Handoff.P50), id, ms(r.Handoff.P99)); err != nil {
				return err
			}
		}
	}
	return nil
}

func primName(r PrimResult) string {
	if r.Partial {
		return r.Store + " *"
	}
	return r.Store
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// fmtUS formats d in microseconds, "-" for zero.
func fmtUS(d time.Duration) string {
	if d == 0 {
		return "-"
	}
	return strconv.FormatFloat(float64(d)/float64(time.Microsecond), 'f', 1, 64)
}
