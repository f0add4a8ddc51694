package harness

import (
	"testing"
	"time"
)

// TestZooKeeperHealProbe checks the write probe Heal trusts: it passes on
// a serving ensemble (and Heal then leaves it alone), fails on one that
// cannot commit (here every server SIGSTOPped, so no session can be
// created), and leaves nothing behind (the suite's goroutine-leak check
// catches a connect still waiting for its answer). The wedged-leader branch
// itself runs in the F8 fault runs, where the run notes each restart.
func TestZooKeeperHealProbe(t *testing.T) {
	ctx := t.Context()
	b := &ZooKeeper{}
	if err := b.Start(ctx, t.TempDir()); err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if err := zkCommitProbe(ctx, b.Endpoints(), 20*time.Second); err != nil {
		t.Fatalf("probe on a serving ensemble: %v", err)
	}
	did, err := b.Heal(ctx)
	if err != nil || did != "" {
		t.Fatalf("Heal on a serving ensemble = %q, %v; want nothing done", did, err)
	}
	if err := b.PauseStore(); err != nil {
		t.Fatal(err)
	}
	err = zkCommitProbe(ctx, b.Endpoints(), time.Second)
	if rerr := resumeAll(b.procs()); rerr != nil {
		t.Fatal(rerr)
	}
	if err == nil {
		t.Fatal("probe on a paused ensemble passed")
	}
}
