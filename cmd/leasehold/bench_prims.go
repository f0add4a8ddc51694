package main

import (
	"context"
	"fmt"

	"github.com/leasehold-go/leasehold/bench"
)

// prim measures t's semaphore and read-write lock with --prims, and
// reports whether to go on.
func (r *benchRun) prim(ctx context.Context, t benchTarget) bool {
	if !r.p.prims {
		return true
	}
	fmt.Fprintf(r.a.stderr, "leasehold bench: %s: the semaphore and the read-write lock\n", t.name)
	res, err := bench.Prims(ctx, t.st, bench.PrimOptions{Name: t.name})
	if err != nil && !res.Partial {
		fmt.Fprintf(r.a.stderr, "leasehold bench: %s: %s\n", t.name, message(err))
		return ctx.Err() == nil
	}
	r.prims = append(r.prims, res)
	return ctx.Err() == nil
}

// reportPrims prints the --prims tables and SUMMARY lines, then the
// errors they counted, and returns the exit status they give.
func (r *benchRun) reportPrims() int {
	if len(r.prims) == 0 {
		return exitFailure
	}
	code := exitOK
	if err := bench.WritePrimsTable(r.a.stdout, r.prims, r.p.format); err != nil {
		fmt.Fprintf(r.a.stderr, "leasehold bench: %v\n", err)
		code = exitFailure
	}
	fmt.Fprintln(r.a.stdout)
	if err := bench.WritePrimsSummary(r.a.stdout, r.prims); err != nil {
		fmt.Fprintf(r.a.stderr, "leasehold bench: %v\n", err)
		code = exitFailure
	}
	for _, res := range r.prims {
		if res.Errors > 0 {
			fmt.Fprintf(r.a.stderr, "leasehold bench: %s: semaphore and read-write lock: %d errors; the first: %s\n", res.Store, res.Errors, res.FirstError)
			code = exitFailure
		}
	}
	return code
}
