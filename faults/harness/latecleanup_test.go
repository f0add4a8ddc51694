package harness_test

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/leasehold-go/leasehold/faults/check"
	"github.com/leasehold-go/leasehold/faults/harness"
	"github.com/leasehold-go/leasehold/faults/report"
	"github.com/leasehold-go/leasehold/storeurl"
)

// TestLateCleanupBitesPostgres runs the late clean-up fault (F5c) alone on
// PostgreSQL's lease rows with the long mode's workload (3 holders x 8
// keys), where it used not to bite: every pooled connection of the holder
// waited behind a held statement, so its retry reached the store only
// after the clean-up, and the other holders took the key meanwhile. Every
// episode must now bite at its first try, and none may show concurrent
// holders.
func TestLateCleanupBitesPostgres(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a PostgreSQL server and holder processes for about 30 s")
	}
	r, err := harness.Run(context.Background(), harness.RunConfig{
		Backend: &harness.Postgres{Mode: "lease"}, Open: storeurl.Open,
		HolderCmd: []string{os.Args[0], "holder"}, HolderEnv: []string{holderEnv + "=1"},
		Dir: t.TempDir(), TTL: time.Second, Seed: 7, Faults: []string{check.F5c},
		Keys: harness.KeyNames(8), Work: 100 * time.Millisecond, OpsMin: 4, OpsMax: 12,
		Duration: 20 * time.Second, Log: t.Logf,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Log(report.Summary(r))
	m := r.Metrics
	if n := m.Episodes[check.F5c]; n < 2 || m.LateCleanups != n {
		t.Errorf("F5c: %d episodes, %d bit; want at least 2, every one", n, m.LateCleanups)
	}
	if len(r.Invalid) > 0 || m.DoubleByFault[check.F5c] > 0 {
		t.Errorf("invalid %v; concurrent holders under F5c: %d", r.Invalid, m.DoubleByFault[check.F5c])
	}
	if m.StaleAccepted != 0 || m.TokenBackwards+m.TokenRepeats != 0 {
		t.Errorf("safety: %s", report.Summary(r))
	}
}
