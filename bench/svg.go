package bench

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"math"
	"strconv"
)

// Chart geometry, in SVG user units (pixels).
const (
	svgWidth    = 1000
	svgLabelX   = 300 // right edge of the row labels
	svgPlotX0   = 310
	svgPlotX1   = 880
	svgRowH     = 22
	svgFont     = "font-family=\"Helvetica, Arial, sans-serif\""
	svgPanelGap = 40
)

// colours returns the fill colours of a kind of row ("measured", "quoted",
// "floor" or "peer"): dark for the first figure (p50, or the low end of a
// quoted range), light for the second (p99, the high end).
func colours(kind string) (dark, light string) {
	switch kind {
	case "measured":
		return "#1f5fa8", "#9ec3ec"
	case "floor":
		return "#2b8a3e", "#9fd8a8"
	case "peer":
		return "#d9700f", "#f7c08f"
	}
	return "#666666", "#c4c4c4"
}

// knownKind reports whether kind has its own colours.
func knownKind(kind string) bool {
	return kind == "measured" || kind == "quoted" || kind == "floor" || kind == "peer"
}

// chartRow is one labelled row of a panel: one or two values.
type chartRow struct {
	label string
	kind  string  // "measured", "quoted", "floor" or "peer"
	a, b  float64 // values (0: none); b is drawn lighter, behind a
	aText string
	bText string
}

// panel is one log-scale horizontal bar chart.
type panel struct {
	title string
	unit  func(float64) string // tick label
	rows  []chartRow
}

// WriteSVG draws rep as an SVG image: acquire latency (p50 and p99) and
// throughput per store and client count, the reference figures next to
// them, and, when rep has them, acquire latency against the number of held
// leases and store attempts per release against the number of waiters.
// Scales are logarithmic, since the stores differ by orders of magnitude.
func WriteSVG(w io.Writer, rep Report, title string) error {
	lat, thr := cyclePanels(rep)
	var body bytes.Buffer
	y := 50
	for _, p := range []panel{lat, thr, scalePanel(rep), herdPanel(rep)} {
		if len(p.rows) == 0 {
			continue
		}
		y = p.draw(&body, y) + svgPanelGap
	}
	if y == 50 {
		fmt.Fprintf(&body, `<text x="20" y="80" font-size="14" %s>no results to draw</text>`+"\n", svgFont)
		y = 100
	}
	y = legend(&body, y-svgPanelGap/2)
	height := y + 20

	var out bytes.Buffer
	fmt.Fprintf(&out, `<?xml version="1.0" encoding="UTF-8"?>`+"\n")
	fmt.Fprintf(&out, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d">`+"\n", svgWidth, height, svgWidth, height)
	fmt.Fprintf(&out, `<title>%s</title>`+"\n", esc(title))
	fmt.Fprintf(&out, `<rect x="0" y="0" width="%d" height="%d" fill="#ffffff"/>`+"\n", svgWidth, height)
	fmt.Fprintf(&out, `<text x="20" y="30" font-size="18" font-weight="bold" %s>%s</text>`+"\n", svgFont, esc(title))
	out.Write(body.Bytes())
	out.WriteString("</svg>\n")
	_, err := w.Write(out.Bytes())
	return err
}

// cyclePanels returns the acquire latency and throughput panels: a row
// per cycles result, then a row per reference figure.
func cyclePanels(rep Report) (lat, thr panel) {
	lat = panel{title: "Acquire latency, ms (log scale): p50 dark, p99 light", unit: tickMS}
	thr = panel{title: "Throughput, acquire+release cycles per second (log scale)", unit: tickCount}
	for _, r := range rep.Cycles {
		label := r.Store + ", " + clientsLabel(r.Clients)
		if r.Keys == Hot {
			label += ", hot key"
		}
		if r.Partial {
			label += " *"
		}
		if r.Acquire.P50 > 0 {
			lat.rows = append(lat.rows, chartRow{label: label, kind: "measured",
				a: ms(r.Acquire.P50), b: ms(r.Acquire.P99), aText: fmtMS(r.Acquire.P50), bText: fmtMS(r.Acquire.P99)})
		}
		if c := r.CyclesPerSec(); c > 0 {
			thr.rows = append(thr.rows, chartRow{label: label, kind: "measured", a: c, aText: fmtRate(c)})
		}
	}
	for _, r := range rep.References {
		kind := r.Kind
		if !knownKind(kind) {
			kind = "quoted"
		}
		label := r.Store + " (" + r.Kind + ")"
		if r.Clients > 0 {
			label = r.Store + ", " + clientsLabel(r.Clients) + " (" + r.Kind + ")"
		}
		if r.AcquireHigh > 0 {
			row := chartRow{label: label, kind: kind, a: ms(r.AcquireLow), b: ms(r.AcquireHigh), aText: fmtMS(r.AcquireLow)}
			if r.AcquireHigh != r.AcquireLow {
				row.bText = fmtMS(r.AcquireHigh)
			} else {
				row.b = 0
			}
			lat.rows = append(lat.rows, row)
		}
		if r.CyclesPerSec > 0 {
			thr.rows = append(thr.rows, chartRow{label: label, kind: kind, a: r.CyclesPerSec, aText: fmtRate(r.CyclesPerSec)})
		}
	}
	return lat, thr
}

// scalePanel returns the panel of acquire latency against held leases.
func scalePanel(rep Report) panel {
	p := panel{title: "Acquire latency with N leases held, ms (log scale): p50 dark, p99 light", unit: tickMS}
	for _, r := range rep.Scale {
		if r.Acquire.P50 > 0 {
			p.rows = append(p.rows, chartRow{label: r.Store + ", " + fmtInt(int64(r.Held)) + " held", kind: "measured",
				a: ms(r.Acquire.P50), b: ms(r.Acquire.P99), aText: fmtMS(r.Acquire.P50), bText: fmtMS(r.Acquire.P99)})
		}
	}
	return p
}

// herdPanel returns the panel of store attempts per release against
// waiters.
func herdPanel(rep Report) panel {
	p := panel{title: "Store acquire attempts per release with W waiters on one key (log scale)", unit: tickCount}
	for _, r := range rep.Herd {
		if r.WakeupsPerRelease > 0 {
			p.rows = append(p.rows, chartRow{label: r.Store + ", " + fmtInt(int64(r.Waiters)) + " waiting", kind: "measured",
				a: r.WakeupsPerRelease, aText: strconv.FormatFloat(r.WakeupsPerRelease, 'f', 1, 64)})
		}
	}
	return p
}

// draw draws the panel with its top at y and returns the y below it.
func (p panel) draw(b *bytes.Buffer, y int) int {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, r := range p.rows {
		for _, v := range []float64{r.a, r.b} {
			if v > 0 {
				lo, hi = math.Min(lo, v), math.Max(hi, v)
			}
		}
	}
	dlo, dhi := math.Floor(math.Log10(lo)), math.Ceil(math.Log10(hi))
	if dhi <= dlo {
		dhi = dlo + 1
	}
	x := func(v float64) float64 {
		f := (math.Log10(v) - dlo) / (dhi - dlo)
		return svgPlotX0 + math.Max(0, math.Min(1, f))*(svgPlotX1-svgPlotX0)
	}
	fmt.Fprintf(b, `<text x="20" y="%d" font-size="14" font-weight="bold" %s>%s</text>`+"\n", y+14, svgFont, esc(p.title))
	top := y + 38
	bottom := top + len(p.rows)*svgRowH
	// Decade grid and tick labels.
	for d := dlo; d <= dhi; d++ {
		gx := x(math.Pow(10, d))
		fmt.Fprintf(b, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#dddddd" stroke-width="1"/>`+"\n", gx, top-4, gx, bottom)
		fmt.Fprintf(b, `<text x="%.1f" y="%d" font-size="11" text-anchor="middle" fill="#555555" %s>%s</text>`+"\n",
			gx, top-8, svgFont, esc(p.unit(math.Pow(10, d))))
	}
	for i, r := range p.rows {
		ry := top + i*svgRowH
		dark, light := colours(r.kind)
		fmt.Fprintf(b, `<text x="%d" y="%d" font-size="12" text-anchor="end" %s>%s</text>`+"\n", svgLabelX, ry+15, svgFont, esc(r.label))
		end := float64(svgPlotX0)
		if r.b > 0 {
			xb := x(r.b)
			fmt.Fprintf(b, `<rect x="%d" y="%d" width="%.1f" height="16" fill="%s"/>`+"\n", svgPlotX0, ry+3, math.Max(1, xb-svgPlotX0), light)
			end = math.Max(end, xb)
		}
		if r.a > 0 {
			xa := x(r.a)
			h, off := 16, 3
			if r.b > 0 {
				h, off = 8, 7
			}
			fmt.Fprintf(b, `<rect x="%d" y="%d" width="%.1f" height="%d" fill="%s"/>`+"\n", svgPlotX0, ry+off, math.Max(1, xa-svgPlotX0), h, dark)
			end = math.Max(end, xa)
		}
		text := r.aText
		if r.bText != "" {
			text += " / " + r.bText
		}
		fmt.Fprintf(b, `<text x="%.1f" y="%d" font-size="11" fill="#333333" %s>%s</text>`+"\n", end+4, ry+15, svgFont, esc(text))
	}
	fmt.Fprintf(b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#888888" stroke-width="1"/>`+"\n", svgPlotX0, top-4, svgPlotX0, bottom)
	return bottom
}

// legend draws the colour key at y and returns the y below it.
func legend(b *bytes.Buffer, y int) int {
	x := 20
	for _, k := range []struct{ kind, text string }{
		{"measured", "measured by leasehold bench"},
		{"floor", "raw protocol floor"},
		{"peer", "peer library"},
		{"quoted", "figure quoted in the field"},
	} {
		dark, _ := colours(k.kind)
		fmt.Fprintf(b, `<rect x="%d" y="%d" width="14" height="14" fill="%s"/>`+"\n", x, y, dark)
		fmt.Fprintf(b, `<text x="%d" y="%d" font-size="12" %s>%s</text>`+"\n", x+20, y+12, svgFont, esc(k.text))
		x += 30 + 7*len(k.text)
	}
	return y + 20
}

// tickMS labels a decade of milliseconds.
func tickMS(v float64) string {
	switch {
	case v >= 1000:
		return strconv.FormatFloat(v/1000, 'f', -1, 64) + " s"
	case v < 1e-3:
		return strconv.FormatFloat(v*1000, 'f', -1, 64) + " µs"
	}
	return strconv.FormatFloat(v, 'f', -1, 64) + " ms"
}

// tickCount labels a decade of a count: 1, 10, 100, 1k, 10k, 1M.
func tickCount(v float64) string {
	switch {
	case v >= 1e6:
		return strconv.FormatFloat(v/1e6, 'f', -1, 64) + "M"
	case v >= 1e3:
		return strconv.FormatFloat(v/1e3, 'f', -1, 64) + "k"
	}
	return strconv.FormatFloat(v, 'f', -1, 64)
}

// esc escapes s for XML text and attribute values.
func esc(s string) string {
	var b bytes.Buffer
	_ = xml.EscapeText(&b, []byte(s)) // writes to a bytes.Buffer never fail
	return b.String()
}
