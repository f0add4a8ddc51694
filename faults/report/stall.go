package report

import (
	"fmt"
	"strings"

	"github.com/leasehold-go/leasehold/faults/check"
)

// ReadStallRecords reads the W7 results of a results file written by the
// suite (the lines ReadRecords skips).
func ReadStallRecords(path string) ([]*check.StallResult, error) {
	recs, err := readRecordFile(path)
	if err != nil {
		return nil, err
	}
	var out []*check.StallResult
	for _, r := range recs {
		if r.Stall != nil {
			out = append(out, r.Stall)
		}
	}
	return out, nil
}

// StallVerdicts pools W7 results by mode and returns, for the default
// options and for the negative control, the verdict of the pooled runs and
// whether it fails the suite: a stale write landed with the default
// options, or any run invalid (the control did not bite, or no stall was
// overtaken).
func StallVerdicts(rs []*check.StallResult) (safe, control string, failed bool) {
	var s, u stallPool
	for _, r := range rs {
		if r.Unsafe {
			u.add(r)
		} else {
			s.add(r)
		}
	}
	safe, control = "not run", "not run"
	if s.runs > 0 {
		safe = "meets the target: no stale write landed"
		if len(s.missed) > 0 {
			safe, failed = "**misses**: "+strings.Join(s.missed, "; "), true
		} else if len(s.invalid) > 0 {
			safe, failed = "**invalid**: "+strings.Join(s.invalid, "; "), true
		}
	}
	if u.runs > 0 {
		control = fmt.Sprintf("bit in %d of %d runs (the workload sees what it claims to catch)", u.runs-len(u.invalid), u.runs)
		if len(u.invalid) > 0 {
			control, failed = "**invalid**: "+strings.Join(u.invalid, "; "), true
		}
	}
	return safe, control, failed
}

type stallPool struct {
	runs                                   int
	seconds                                float64
	seeds                                  []uint64
	sent, landed, stalls, overtaken, stale int
	refused, gaveUp                        int
	missed, invalid, violations            []string
}

func (p *stallPool) add(r *check.StallResult) {
	p.runs++
	p.seconds = max(p.seconds, r.Seconds)
	p.seeds = append(p.seeds, r.Seed)
	p.sent += r.Sent
	p.landed += r.Landed
	p.stalls += r.Stalls
	p.overtaken += r.Overtaken
	p.stale += r.StaleLanded
	p.refused += r.Refused
	p.gaveUp += r.GaveUp
	for _, x := range r.Missed {
		p.missed = append(p.missed, fmt.Sprintf("seed %d: %s", r.Seed, x))
	}
	for _, x := range r.Invalid {
		p.invalid = append(p.invalid, fmt.Sprintf("seed %d: %s", r.Seed, x))
	}
	if len(r.Violations) > 0 && len(p.violations) < 3 {
		p.violations = append(p.violations, r.Violations[0])
	}
}

// stallMarkdown renders the W7 table; empty when there is no W7 result.
func stallMarkdown(rs []*check.StallResult) string {
	if len(rs) == 0 {
		return ""
	}
	var s, u stallPool
	store := rs[0].Store
	for _, r := range rs {
		if r.Unsafe {
			u.add(r)
		} else {
			s.add(r)
		}
	}
	safeVerdict, controlVerdict, _ := StallVerdicts(rs)
	var b strings.Builder
	w := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	w("\n## fence.Middleware under stalled writers (W7)\n\n")
	w("Writers lease keys from the %s store and send fenced writes over HTTP to a service behind `fence.Middleware`,\n", store)
	w("whose handler stalls at random after the admission, longer than the writer waits; the writer gives up, releases,\n")
	w("and the next writer arrives with a higher token while the stalled write is still pending. This workload runs on\n")
	w("the embedded SQLite store only: the store just issues the tokens, and what is tested is the middleware. With the\n")
	w("default options, a write queued behind a stalled one whose writer gave up first is never admitted (503), so fewer\n")
	w("writes land than are sent; that is the price of the per-resource lock.\n\n")
	w("| workload | runs | writes sent / landed | handler stalls (overtaken by a newer token) | stale writes landed | verdict |\n")
	w("| --- | --- | --- | --- | --- | --- |\n")
	row := func(name string, p *stallPool, verdict string) {
		if p.runs == 0 {
			w("| %s | 0 | | | | not run |\n", name)
			return
		}
		w("| %s | %d x %.0f s, %s | %s / %s | %s (%s) | %s | %s |\n", name, p.runs, p.seconds, seedList(p.seeds),
			commas(p.sent), commas(p.landed), commas(p.stalls), commas(p.overtaken), commas(p.stale), mdEscape(verdict))
	}
	row("W7 `fence.Middleware`, default options", &s, safeVerdict)
	row("W7 `fence.Middleware`, `UnsafeConcurrent` (negative control)", &u, controlVerdict)
	for _, v := range u.violations {
		w("\n- Negative control, for inspection: %s", mdEscape(v))
	}
	if len(u.violations) > 0 {
		w("\n")
	}
	return b.String()
}

// StallSummary is the one-paragraph text of a W7 result.
func StallSummary(r *check.StallResult) string {
	mode := "default options"
	if r.Unsafe {
		mode = "UnsafeConcurrent (negative control)"
	}
	s := fmt.Sprintf("%s seed %d W7 fence.Middleware, %s: %.0f s, %d writers on %d keys; %d writes sent, %d landed, %d refused (409), %d given up by the writer, %d 503; %d handler stalls, %d overtaken by a newer token; stale writes landed %d",
		r.Store, r.Seed, mode, r.Seconds, r.Writers, r.Keys, r.Sent, r.Landed, r.Refused, r.GaveUp, r.Unavailable, r.Stalls, r.Overtaken, r.StaleLanded)
	if r.AcquireRetries > 0 {
		s += fmt.Sprintf("; %d acquires retried (a late grant or a store failure)", r.AcquireRetries)
	}
	for _, v := range r.Violations {
		s += "\n  " + v
	}
	for _, x := range r.Missed {
		s += "\n  MISSED: " + x
	}
	for _, x := range r.Invalid {
		s += "\n  INVALID: " + x
	}
	return s
}
