package harness

import (
	"testing"
	"time"
)

// TestZooKeeperHealProbe checks the write probe Heal trusts: it passes on
// a serving ensemble (and Heal then leaves it alone), fails on one that
// cannot commit (here every server SIGSTOPped, so no session can be
// created), and leaves nothing behind (the suite's goroutine-leak check
// catches a connect still waiting for its answer). Then it runs Heal's
// repair, the leader's restart, on a serving ensemble: the ensemble must
// commit again after it. (A wedge itself could not be made on purpose: it
// came in 3 of 24 F8 runs on a machine at load 5, and in none of 24
// pauses timed to expire sessions as the ensemble resumed.)
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
	if err := b.waitServing(ctx); err != nil {
		t.Fatal(err)
	}
	name, err := b.restartLeader(ctx)
	if err != nil {
		t.Fatalf("restart of the leader: %v", err)
	}
	if err := zkCommitProbe(ctx, b.Endpoints(), 20*time.Second); err != nil {
		t.Fatalf("probe after restarting the leader %s: %v", name, err)
	}
}
