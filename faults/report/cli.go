package report

import (
	"fmt"
	"strings"
	"time"

	"github.com/leasehold-go/leasehold/faults/check"
)

// ReadCLIRecords reads the CLI workload's results from a results file
// written by the suite.
func ReadCLIRecords(path string) ([]*check.CLIResult, error) {
	return readKind(path, func(r Record) *check.CLIResult { return r.CLI })
}

// CLIMarkdown renders the CLI workload's results, one row per store, in
// the order of stores (the harness's harness.BackendNames); "" when there
// are none.
func CLIMarkdown(rs []*check.CLIResult, stores []string) string {
	if len(rs) == 0 {
		return ""
	}
	var b strings.Builder
	w := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	w("\n## leasehold run (the CLI)\n\n")
	w("Holders are `leasehold run` processes contending for one key; the protected writes come from the command\n")
	w("they run, which ignores SIGTERM. Faults hit the leasehold process: %s. The target is\n", cliFaultList())
	w("the rule of `leasehold run`: no command writes after the next holder's grant (taken as the next command's\n")
	w("start, which follows the grant by a fork and exec; the smallest margin is the closest a command's last write\n")
	w("came to it).\n\n")
	w("| store | runs | commands | writes | faults that stopped their target (C1 / C2 / C3) | writes after the next grant | smallest margin | verdict |\n")
	w("| --- | --- | --- | --- | --- | --- | --- | --- |\n")
	for _, name := range stores {
		var runs, cmds, writes, after int
		bit, eps := map[string]int{}, map[string]int{}
		margin := time.Duration(-1)
		var bad []string
		for _, r := range rs {
			if r.Store != name {
				continue
			}
			runs++
			cmds += r.Commands
			writes += r.Writes
			after += r.AfterGrant
			for c, n := range r.Bit {
				bit[c] += n
			}
			for c, n := range r.Episodes {
				eps[c] += n
			}
			if r.Margin >= 0 && (margin < 0 || r.Margin < margin) {
				margin = r.Margin
			}
			bad = append(append(bad, r.Missed...), r.Invalid...)
		}
		if runs == 0 {
			continue
		}
		var fs []string
		for _, c := range check.CLIFaults {
			fs = append(fs, fmt.Sprintf("%d/%d", bit[c.ID], eps[c.ID]))
		}
		verdict := "ok"
		if len(bad) > 0 {
			verdict = mdEscape(strings.Join(bad, "; "))
		}
		w("| %s | %d | %d | %d | %s | %d | %s | %s |\n", name, runs, cmds, writes, strings.Join(fs, " / "), after, margin.Round(time.Millisecond), verdict)
	}
	return b.String()
}

func cliFaultList() string {
	var out []string
	for _, c := range check.CLIFaults {
		out = append(out, "**"+c.ID+"** "+c.Description)
	}
	return strings.Join(out, ", ")
}

// CLISummary is one line about a CLI workload run.
func CLISummary(r *check.CLIResult) string {
	status := runStatus(r.Missed, r.Invalid, "ok")
	var eps []string
	for _, c := range check.CLIFaults {
		eps = append(eps, fmt.Sprintf("%s %d/%d", c.ID, r.Bit[c.ID], r.Episodes[c.ID]))
	}
	return fmt.Sprintf("%-18s cli  seed %d  TTL %s  %.0f s: %d commands, %d writes, %d killed (faults that stopped their target: %s); writes after the next grant: %d, smallest margin %s, fenced %d: %s",
		r.Store, r.Seed, r.TTL, r.Seconds, r.Commands, r.Writes, r.Stopped, strings.Join(eps, ", "), r.AfterGrant, r.Margin.Round(time.Millisecond), r.Fenced, status)
}
