package harness_test

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/leasehold-go/leasehold/faults/check"
	"github.com/leasehold-go/leasehold/faults/harness"
	"github.com/leasehold-go/leasehold/faults/report"
	"github.com/leasehold-go/leasehold/storeurl"
)

func runSQLite(t *testing.T, mutation bool, classes ...string) *check.RunResult {
	t.Helper()
	dir := t.TempDir()
	r, err := harness.Run(context.Background(), harness.RunConfig{
		Backend: &harness.SQLite{}, Open: storeurl.Open,
		HolderCmd: []string{os.Args[0], "holder"}, HolderEnv: []string{holderEnv + "=1"},
		Dir: dir, TTL: 500 * time.Millisecond, Seed: 42, Mutation: mutation, Faults: classes,
		Log: t.Logf,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Log(report.Summary(r))
	return r
}

// TestRunEmbedded runs the harness end to end on the embedded store, with
// real holder processes (this test binary, re-executed), pauses, kills and
// an in-holder partition.
func TestRunEmbedded(t *testing.T) {
	if testing.Short() {
		t.Skip("runs holder processes for about 20 s")
	}
	r := runSQLite(t, false, "F1", "F2", "F3", "F6")
	m := r.Metrics
	if m.Episodes["F2"] == 0 || m.Episodes["F3"] == 0 || m.Episodes["F6"] == 0 {
		t.Fatalf("episodes %v", m.Episodes)
	}
	if len(r.Invalid) > 0 {
		t.Fatalf("invalid run (the faults did not bite): %v", r.Invalid)
	}
	for _, x := range r.Missed {
		if !strings.HasPrefix(x, "takeover p99") { // a timing figure, not asserted here
			t.Errorf("missed: %s", x)
		}
	}
	if m.StaleAccepted != 0 || m.TokenBackwards+m.TokenRepeats != 0 || m.OpsAfterLoss+m.OpsAfterDeadline != 0 {
		t.Errorf("safety: %s", report.Summary(r))
	}
	if m.Saves == 0 || m.LostUpdates+m.Overlaps == 0 {
		t.Errorf("the pauses did not show: saves %d, unfenced violations %d", m.Saves, m.LostUpdates+m.Overlaps)
	}
}

// TestMutationIsCaught disables the resource's fence check: the checkers
// must report the stale writes that get through.
func TestMutationIsCaught(t *testing.T) {
	if testing.Short() {
		t.Skip("runs holder processes for about 10 s")
	}
	r := runSQLite(t, true)
	if !r.Mutation || len(r.Missed) > 0 || r.Metrics.StaleAccepted == 0 {
		t.Fatalf("mutation not caught: %s", report.Summary(r))
	}
	if r.Metrics.Linearizable != "Illegal" {
		t.Errorf("porcupine did not catch the mutation: %s", r.Metrics.Linearizable)
	}
}
