package main

import (
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/leasehold-go/leasehold/faults/harness"
)

// storesCmd prints, one a line, the stores (fault backends) a suite runs,
// or with -servers the servers they start, each installed by
// scripts/install/<server>.sh: the lists scripts need, from the store
// table.
//
//	faults stores                 the suite's default stores
//	faults stores -all            every store the harness can run
//	faults stores -stores a,b     the stores named (checked)
//	faults stores -servers ...    their servers instead, each once
func storesCmd(w io.Writer, args []string) (int, error) {
	fs := flag.NewFlagSet("stores", flag.ContinueOnError)
	all := fs.Bool("all", false, "every store the harness can run, not only the suite's default ones")
	named := fs.String("stores", "", "the stores named (comma-separated), as the suite's -stores flag")
	servers := fs.Bool("servers", false, "print the servers the stores start (scripts/install/<server>.sh), each once")
	if err := fs.Parse(args); err != nil {
		return 2, err
	}
	if fs.NArg() > 0 {
		return 2, fmt.Errorf("stores: unexpected argument %q", fs.Arg(0))
	}
	names := harness.SuiteNames()
	switch {
	case *named != "":
		names = strings.Split(*named, ",")
	case *all:
		names = harness.BackendNames()
	}
	var out []string
	for _, n := range names {
		ss, err := harness.BackendServers(n)
		if err != nil {
			return 2, err
		}
		if !*servers {
			ss = []string{n}
		}
		for _, s := range ss {
			if !slices.Contains(out, s) {
				out = append(out, s)
			}
		}
	}
	for _, s := range out {
		fmt.Fprintln(w, s)
	}
	return 0, nil
}
