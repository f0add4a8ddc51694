package report

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/leasehold-go/leasehold/faults/check"
)

// scope is the "(runs x seconds, seed)" part of every figure.
func (s *StoreSummary) scope() string {
	return fmt.Sprintf("%d x %.0f s, %s", s.Runs, s.Seconds, seedList(s.Seeds))
}

// seedList renders seeds: "seed 3", "seeds 1-20" or "seeds 1,5,9".
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

// commas renders n with thousands separators.
func commas(n int) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// byFault renders counts per fault class: " (F9b: 2, F11: 1)".
func byFault(m map[string]int) string {
	if len(m) == 0 {
		return ""
	}
	var parts []string
	for _, c := range append(check.IDs(check.Faults), "none") {
		if n := m[c]; n > 0 {
			parts = append(parts, fmt.Sprintf("%s: %d", c, n))
		}
	}
	return " (" + strings.Join(parts, ", ") + ")"
}

// mdEscape makes s fit in a Markdown table cell.
func mdEscape(s string) string {
	s = strings.ReplaceAll(s, "|", "\\|")
	return strings.ReplaceAll(s, "\n", " ")
}

// ratios renders the p50 and p99 of xs, ratios of the TTL.
func ratios(xs []float64) string {
	if len(xs) == 0 {
		return "no samples"
	}
	return fmt.Sprintf("p50 %s, p99 %s x TTL (n=%d)", fmtRatio(check.Quantile(xs, 0.5)), fmtRatio(check.Quantile(xs, 0.99)), len(xs))
}

// fmtRatio renders a ratio of the TTL; +Inf is "never".
func fmtRatio(x float64) string {
	if math.IsInf(x, 1) {
		return "never"
	}
	return fmt.Sprintf("%.2f", x)
}
