package main

import (
	"flag"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/leasehold-go/leasehold/faults/check"
	"github.com/leasehold-go/leasehold/faults/harness"
	"github.com/leasehold-go/leasehold/faults/report"
)

// reportCmd renders a suite's results file as the safety table, without
// running anything.
func reportCmd(args []string) (int, error) {
	fs := flag.NewFlagSet("report", flag.ExitOnError)
	in := fs.String("json", "", "results file(s) written by faults suite -json, comma-separated; more may follow the flags")
	out := fs.String("out", "", "write the markdown here (default: standard output)")
	mode := fs.String("mode", "long", "the mode the results came from")
	command := fs.String("command", "./scripts/faults --long", "the command that produced them")
	_ = fs.Parse(args)
	// Runs of several suites (sessions) are pooled; a file named twice
	// counts once.
	var paths []string
	for _, p := range append(strings.Split(*in, ","), fs.Args()...) {
		if p != "" && !slices.Contains(paths, p) {
			paths = append(paths, p)
		}
	}
	if len(paths) == 0 {
		return 0, fmt.Errorf("report: give the results file(s): -json FILE or FILE arguments")
	}
	var (
		rs     []*check.RunResult
		stalls []*check.StallResult
		clis   []*check.CLIResult
		errs   = map[string][]string{}
		newest time.Time
	)
	for _, path := range paths {
		r, e, err := report.ReadRecords(path)
		if err != nil {
			return 0, err
		}
		rs = append(rs, r...)
		w7, err := report.ReadStallRecords(path)
		if err != nil {
			return 0, err
		}
		stalls = append(stalls, w7...)
		c, err := report.ReadCLIRecords(path)
		if err != nil {
			return 0, err
		}
		clis = append(clis, c...)
		for store, msgs := range e {
			errs[store] = append(errs[store], msgs...)
		}
		st, err := os.Stat(path)
		if err != nil {
			return 0, err
		}
		if st.ModTime().After(newest) {
			newest = st.ModTime()
		}
	}
	sums := report.Aggregate(rs, errs, harness.BackendNames())
	report.AddFaultNotes(sums, harness.StaticFault)
	md := report.Markdown(sums, stalls, *mode, *command, newest) + report.CLIMarkdown(clis, harness.BackendNames())
	md, primsFailed, err := withPrims(md, paths)
	if err != nil {
		return 0, err
	}
	if *out == "" {
		fmt.Print(md)
	} else {
		if old, err := os.ReadFile(*out); err == nil {
			md = report.KeepTail(md, string(old)) // its Fuzzing section
		}
		if err := os.WriteFile(*out, []byte(md), 0o644); err != nil {
			return 0, err
		}
	}
	code := 0
	for _, s := range sums {
		if s.Failed() {
			code = 1
		}
	}
	if _, _, failed := report.StallVerdicts(stalls); failed || primsFailed {
		code = 1
	}
	return code, nil
}

// withPrims appends to md the W8 and W9 table of the results files, and
// says whether a run of theirs missed a target or was invalid.
func withPrims(md string, paths []string) (string, bool, error) {
	var prs []*check.PrimResult
	failed := false
	for _, path := range paths {
		p, err := report.ReadPrimRecords(path)
		if err != nil {
			return "", false, err
		}
		for _, r := range p {
			failed = failed || len(r.Missed) > 0 || len(r.Invalid) > 0
		}
		prs = append(prs, p...)
	}
	return md + report.PrimMarkdown(prs, harness.BackendNames()), failed, nil
}
