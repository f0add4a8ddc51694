package bench

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Format chooses how WriteTable lays a table out.
type Format int

const (
	// Text aligns columns with spaces, for a terminal.
	Text Format = iota
	// Markdown writes a pipe table.
	Markdown
)

// table is a header and rows of cells; numeric columns align right.
type table struct {
	head  []string
	right []bool
	rows  [][]string
}

func (t *table) add(cells ...string) { t.rows = append(t.rows, cells) }

func (t *table) write(w io.Writer, f Format) error {
	if f == Markdown {
		return t.markdown(w)
	}
	width := make([]int, len(t.head))
	for i, h := range t.head {
		width[i] = utf8.RuneCountInString(h)
	}
	for _, r := range t.rows {
		for i, c := range r {
			width[i] = max(width[i], utf8.RuneCountInString(c))
		}
	}
	line := func(cells []string) string {
		var b strings.Builder
		for i, c := range cells {
			pad := strings.Repeat(" ", width[i]-utf8.RuneCountInString(c))
			if i > 0 {
				b.WriteString("  ")
			}
			if t.right[i] {
				b.WriteString(pad + c)
			} else if i < len(cells)-1 {
				b.WriteString(c + pad)
			} else {
				b.WriteString(c)
			}
		}
		return strings.TrimRight(b.String(), " ") + "\n"
	}
	if _, err := io.WriteString(w, line(t.head)); err != nil {
		return err
	}
	for _, r := range t.rows {
		if _, err := io.WriteString(w, line(r)); err != nil {
			return err
		}
	}
	return nil
}

func (t *table) markdown(w io.Writer) error {
	esc := func(s string) string { return strings.ReplaceAll(s, "|", `\|`) }
	var b strings.Builder
	b.WriteString("|")
	for _, h := range t.head {
		b.WriteString(" " + esc(h) + " |")
	}
	b.WriteString("\n|")
	for i := range t.head {
		if t.right[i] {
			b.WriteString(" ---: |")
		} else {
			b.WriteString(" --- |")
		}
	}
	b.WriteString("\n")
	for _, r := range t.rows {
		b.WriteString("|")
		for _, c := range r {
			b.WriteString(" " + esc(c) + " |")
		}
		b.WriteString("\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteCyclesTable writes one row per result, side by side: cycles per
// second, acquire and release latency percentiles in milliseconds, errors,
// renewals per second of the held leases, and the release-to-waiter
// hand-off time. A partial result's store is marked with an asterisk.
func WriteCyclesTable(w io.Writer, rs []Result, f Format) error {
	t := &table{
		head: []string{"store", "clients", "keys", "cycles/s", "acquire p50 ms", "p90", "p99",
			"release p50 ms", "p99", "errors", "renewals/s", "handoff p50 ms", "p99"},
		right: []bool{false, true, false, true, true, true, true, true, true, true, true, true, true},
	}
	for _, r := range rs {
		name := r.Store
		if r.Partial {
			name += " *"
		}
		t.add(name, strconv.Itoa(r.Clients), r.Keys.String(), fmtRate(r.CyclesPerSec()),
			fmtMS(r.Acquire.P50), fmtMS(r.Acquire.P90), fmtMS(r.Acquire.P99),
			fmtMS(r.Release.P50), fmtMS(r.Release.P99), fmtInt(r.Errors),
			fmtRate(r.RenewalsPerSec), fmtMS(r.Handoff.P50), fmtMS(r.Handoff.P99))
	}
	return t.write(w, f)
}

// WriteScaleTable writes one row per store and held-lease count.
func WriteScaleTable(w io.Writer, rs []ScaleResult, f Format) error {
	t := &table{
		head:  []string{"store", "held leases", "acquire p50 ms", "p99", "release p50 ms", "cycles/s", "fill acquires/s", "memory", "per lease", "errors"},
		right: []bool{false, true, true, true, true, true, true, true, true, true},
	}
	for _, r := range rs {
		name := r.Store
		if r.Partial {
			name += " *"
		}
		per := "-"
		if r.MemBytes >= 0 && r.MemPerLease != 0 && r.Held >= 1000 {
			per = fmtBytes(r.MemPerLease)
		}
		t.add(name, fmtInt(int64(r.Held)), fmtMS(r.Acquire.P50), fmtMS(r.Acquire.P99), fmtMS(r.Release.P50),
			fmtRate(r.CyclesPerSec), fmtRate(r.FillPerSec), fmtBytes(float64(r.MemBytes)), per, fmtInt(r.Errors))
	}
	return t.write(w, f)
}

// WriteHerdTable writes one row per store and number of waiters.
func WriteHerdTable(w io.Writer, rs []HerdResult, f Format) error {
	t := &table{
		head:  []string{"store", "waiters", "hand-offs", "attempts/release", "handoff p50 ms", "p99", "errors"},
		right: []bool{false, true, true, true, true, true, true},
	}
	for _, r := range rs {
		name := r.Store
		if r.Partial {
			name += " *"
		}
		t.add(name, strconv.Itoa(r.Waiters), fmtInt(r.Releases), strconv.FormatFloat(r.WakeupsPerRelease, 'f', 1, 64),
			fmtMS(r.Handoff.P50), fmtMS(r.Handoff.P99), fmtInt(r.Errors))
	}
	return t.write(w, f)
}

// WriteReferenceTable writes the reference figures: quoted, floors, peers.
func WriteReferenceTable(w io.Writer, rs []Reference, f Format) error {
	t := &table{
		head:  []string{"what", "kind", "clients", "acquire ms", "cycles/s", "source"},
		right: []bool{false, false, true, true, true, false},
	}
	for _, r := range rs {
		c := "-"
		if r.Clients > 0 {
			c = strconv.Itoa(r.Clients)
		}
		t.add(r.Store, r.Kind, c, fmtRange(r.AcquireLow, r.AcquireHigh), fmtRate(r.CyclesPerSec), r.Source)
	}
	return t.write(w, f)
}

// WriteTable writes every non-empty part of rep, each under a heading,
// and a note on partial results.
func WriteTable(w io.Writer, rep Report, f Format) error {
	heading := func(s string) error {
		if f == Markdown {
			_, err := fmt.Fprintf(w, "\n**%s**\n\n", s)
			return err
		}
		_, err := fmt.Fprintf(w, "\n%s\n", s)
		return err
	}
	partial := false
	if len(rep.Cycles) > 0 {
		if err := heading("Acquire+release cycles"); err != nil {
			return err
		}
		if err := WriteCyclesTable(w, rep.Cycles, f); err != nil {
			return err
		}
		for _, r := range rep.Cycles {
			partial = partial || r.Partial
		}
	}
	if len(rep.Scale) > 0 {
		if err := heading("Held leases: acquire cost and memory"); err != nil {
			return err
		}
		if err := WriteScaleTable(w, rep.Scale, f); err != nil {
			return err
		}
		for _, r := range rep.Scale {
			partial = partial || r.Partial
		}
	}
	if len(rep.Herd) > 0 {
		if err := heading("Waiters on one key: store attempts per release"); err != nil {
			return err
		}
		if err := WriteHerdTable(w, rep.Herd, f); err != nil {
			return err
		}
		for _, r := range rep.Herd {
			partial = partial || r.Partial
		}
	}
	if len(rep.References) > 0 {
		if err := heading("Reference figures (not measured by leasehold bench)"); err != nil {
			return err
		}
		if err := WriteReferenceTable(w, rep.References, f); err != nil {
			return err
		}
	}
	if partial {
		if _, err := io.WriteString(w, "\n* interrupted: the figures cover the part that ran\n"); err != nil {
			return err
		}
	}
	return nil
}
