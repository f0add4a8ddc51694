package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/leasehold-go/leasehold/faults"
)

// reportCmd renders a suite's results file as the safety table, without
// running anything.
func reportCmd(args []string) (int, error) {
	fs := flag.NewFlagSet("report", flag.ExitOnError)
	in := fs.String("json", "", "results file written by faults suite -json")
	out := fs.String("out", "", "write the markdown here (default: standard output)")
	mode := fs.String("mode", "long", "the mode the results came from")
	command := fs.String("command", "./scripts/faults --long", "the command that produced them")
	_ = fs.Parse(args)
	if *in == "" {
		return 0, fmt.Errorf("report: -json is required")
	}
	rs, errs, err := faults.ReadRecords(*in)
	if err != nil {
		return 0, err
	}
	st, err := os.Stat(*in)
	if err != nil {
		return 0, err
	}
	sums := faults.Aggregate(rs, errs)
	md := faults.Markdown(sums, *mode, *command, st.ModTime())
	if *out == "" {
		fmt.Print(md)
	} else if err := os.WriteFile(*out, []byte(md), 0o644); err != nil {
		return 0, err
	}
	code := 0
	for _, s := range sums {
		if s.Failed() {
			code = 1
		}
	}
	return code, nil
}
