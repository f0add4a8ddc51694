package stall_test

import (
	"context"
	"testing"
	"time"

	"github.com/leasehold-go/leasehold/faults/check"
	"github.com/leasehold-go/leasehold/faults/harness"
	"github.com/leasehold-go/leasehold/faults/report"
	"github.com/leasehold-go/leasehold/faults/stall"
	"github.com/leasehold-go/leasehold/storeurl"
)

func runStall(t *testing.T, unsafe bool) *check.StallResult {
	t.Helper()
	r, err := stall.Run(context.Background(), stall.Config{
		Backend: &harness.SQLite{}, Open: storeurl.Open, Dir: t.TempDir(),
		Unsafe: unsafe, Duration: 3 * time.Second, Seed: 42, Log: t.Logf,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Log(report.StallSummary(r))
	return r
}

// TestStallWorkload runs W7 end to end on the embedded store: through
// fence.Middleware with default options no stale write lands although
// stalls are overtaken by newer tokens; with UnsafeConcurrent (the negative
// control) stale writes land and the run says so.
func TestStallWorkload(t *testing.T) {
	if testing.Short() {
		t.Skip("runs writers for about 6 s")
	}
	safe := runStall(t, false)
	if safe.StaleLanded != 0 || len(safe.Missed) != 0 || len(safe.Invalid) != 0 {
		t.Errorf("default options: %s", report.StallSummary(safe))
	}
	if safe.Overtaken == 0 || safe.Landed == 0 {
		t.Errorf("default options: the stalls did not bite: %s", report.StallSummary(safe))
	}
	unsafe := runStall(t, true)
	if unsafe.StaleLanded == 0 || len(unsafe.Invalid) != 0 || len(unsafe.Missed) != 0 {
		t.Errorf("UnsafeConcurrent: want stale writes and a valid run: %s", report.StallSummary(unsafe))
	}
}
