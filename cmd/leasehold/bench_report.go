package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/leasehold-go/leasehold/bench"
)

// benchReport prints the earlier and the fresh results together: the
// table (unless --json) and the chart, then the errors the fresh results
// counted. It returns the command's exit status.
func (a *app) benchReport(p *benchPlan, fresh bench.Report, interrupted bool) int {
	rep := p.previous
	rep.Cycles = append(rep.Cycles, fresh.Cycles...)
	rep.Scale = append(rep.Scale, fresh.Scale...)
	rep.Herd = append(rep.Herd, fresh.Herd...)

	code := exitOK
	if !p.asJSON {
		if err := bench.WriteTable(a.stdout, rep, p.format); err != nil {
			fmt.Fprintf(a.stderr, "leasehold bench: %v\n", err)
			code = exitFailure
		}
	}
	if p.chart != "" {
		if err := writeChart(p.chart, rep, p.title); err != nil {
			fmt.Fprintf(a.stderr, "leasehold bench: %v\n", err)
			code = exitFailure
		}
	}
	if n := reportErrors(a.stderr, fresh); n > 0 && code == exitOK {
		code = exitFailure
	}
	if interrupted {
		return exitInterrupted
	}
	return code
}

// reportErrors prints the first error of every result that counted some,
// and returns how many results did.
func reportErrors(w io.Writer, rep bench.Report) int {
	fs := rep.Failures()
	for _, f := range fs {
		fmt.Fprintf(w, "leasehold bench: %s: %d errors; the first: %s\n", f.What, f.Errors, message(errors.New(f.First)))
	}
	return len(fs)
}

// writeChart writes the SVG chart to path through a temporary file.
func writeChart(path string, rep bench.Report, title string) error {
	f, err := os.CreateTemp(filepath.Dir(path), ".leasehold-bench-*")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	if err := bench.WriteSVG(f, rep, title); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Chmod(f.Name(), 0o644); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}
