package benchcycle

import (
	"context"
	"flag"
	"fmt"
	"os"
	"testing"
	"time"
)

// Report is what [Main] prints after the benchmarks.
type Report struct {
	// Ref is the reference implementation (a peer library): the table's
	// ratios are over its rates.
	Ref string
	// Summary is the id of the SUMMARY line for scripts/bench-page's
	// summary table: the rate of the implementation named "lh-client" (the
	// leasehold Client) over Ref's, one goroutine on its own key (g1).
	Summary string
	// More are further SUMMARY lines of the same kind: the "lh-client"
	// g1 rate over that of each named implementation (a raw floor, a
	// second peer).
	More []Ratio
}

// Ratio names a SUMMARY line: ID, the "lh-client" g1 rate over Over's.
type Ratio struct{ ID, Over string }

// Main is a bench module's TestMain. It adds the flag -rounds (how many
// rounds r.Run runs; the ratios are medians over them) and parses the
// flags; when no benchmark was asked for ([Asked]) it runs the tests and
// starts nothing.
// Otherwise it calls start, with 2 minutes to start the module's servers
// (a start that fails prints its error and exits with status 1), runs the
// benchmarks, calls the stop that start returned, then prints r's table of
// medians and the SUMMARY lines that report names, and exits with the run's
// status.
func Main(m *testing.M, r *Results, report Report, start func(ctx context.Context) (stop func(), err error)) {
	flag.IntVar(&r.rounds, "rounds", 1, "rounds of the cycle benchmarks; the ratios are medians over them")
	flag.Parse()
	if !Asked() {
		os.Exit(m.Run())
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	stop, err := start(ctx)
	cancel()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	stop()
	r.Table(os.Stdout, report.Ref)
	r.Summary(os.Stdout, report.Summary, "g1", "lh-client", report.Ref)
	for _, x := range report.More {
		r.Summary(os.Stdout, x.ID, "g1", "lh-client", x.Over)
	}
	os.Exit(code)
}
