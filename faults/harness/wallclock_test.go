package harness_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/leasehold-go/leasehold/faults/check"
	"github.com/leasehold-go/leasehold/faults/clock"
	"github.com/leasehold-go/leasehold/faults/harness"
	"github.com/leasehold-go/leasehold/faults/report"
	"github.com/leasehold-go/leasehold/storeurl"
)

func runWallStep(t *testing.T, wall []string) (*check.RunResult, error) {
	t.Helper()
	return harness.Run(context.Background(), harness.RunConfig{
		Backend: &harness.SQLite{}, Open: storeurl.Open,
		HolderCmd: []string{os.Args[0], "holder"}, HolderEnv: []string{holderEnv + "=1"},
		WallHolderCmd: wall,
		Dir:           t.TempDir(), TTL: 500 * time.Millisecond, Seed: 42, Faults: []string{check.F17},
		Log: t.Logf,
	})
}

// TestWallStepNeedsThePatch: a holder whose time package is not patched
// (this test binary) does not see the step, and the run fails saying so
// instead of passing a fault that never happened.
func TestWallStepNeedsThePatch(t *testing.T) {
	if testing.Short() {
		t.Skip("runs holder processes for a few seconds")
	}
	_, err := runWallStep(t, []string{os.Args[0], "holder"})
	if err == nil || !strings.Contains(err.Error(), "did not report a wall clock off by") {
		t.Fatalf("F17 with an unpatched holder: %v, want the run to fail on the step that did not reach it", err)
	}
}

// TestWallStepEmbedded runs F17 end to end on the embedded store with the
// holder built with the patched time package: the step reaches it (or the
// run fails), and the tokens fence whatever the step does to the store's
// clock as that holder reads it.
func TestWallStepEmbedded(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the harness with a patched time package (minutes cold) and runs holder processes")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "faults-wallclock")
	if err := clock.BuildShifted(context.Background(), "..", "./cmd/faults", bin, filepath.Join(dir, "overlay")); err != nil {
		t.Fatal(err)
	}
	r, err := runWallStep(t, []string{bin, "holder"})
	if err != nil {
		t.Fatal(err)
	}
	t.Log(report.Summary(r))
	m := r.Metrics
	if m.Episodes[check.F17] != 1 || len(r.Invalid) > 0 {
		t.Fatalf("episodes %v, invalid %v", m.Episodes, r.Invalid)
	}
	if m.StaleAccepted != 0 || m.TokenBackwards+m.TokenRepeats != 0 || m.OpsAfterLoss+m.OpsAfterDeadline != 0 {
		t.Errorf("safety: %s", report.Summary(r))
	}
}
