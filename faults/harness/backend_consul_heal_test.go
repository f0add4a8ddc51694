package harness_test

import (
	"testing"
	"time"

	"github.com/leasehold-go/leasehold/faults/harness"
)

// After a member partition of the front (F14's 10 s), every agent follows
// one leader in Raft well before the front can route requests to it again
// (Serf's reconnect): Heal must return only once every agent answers a
// consistent read, so that the next fault finds the holders making
// progress. The test cuts the front until it has lost its route to the
// leader (it fails if that never happens: then it could not tell a Heal
// that waits from one that does not), heals the lab, waits for Raft to
// agree, calls Heal, and reads through every agent at once.
func TestConsulHealWaitsForRoutes(t *testing.T) {
	b := &harness.Consul{}
	if err := b.Start(t.Context(), t.TempDir()); err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	front := b.AttachedMembers()[0]
	for rounds := 0; ; rounds++ {
		if rounds == 3 {
			t.Fatal("three 12 s cuts of the front never left it unable to route to the leader after the heal")
		}
		if err := b.Lab().Isolate(t.Context(), front); err != nil {
			t.Fatal(err)
		}
		time.Sleep(12 * time.Second)
		if err := b.Lab().Heal(t.Context()); err != nil {
			t.Fatal(err)
		}
		consulAgree(t, b)
		err := b.RoutesRead(t.Context(), front)
		t.Logf("round %d: the front's consistent read once Raft agrees: %v", rounds, err)
		note, herr := b.Heal(t.Context())
		if herr != nil {
			t.Fatal(herr)
		}
		t.Logf("Heal: %q", note)
		for i := range b.Members() {
			if err := b.RoutesRead(t.Context(), i); err != nil {
				t.Fatalf("agent %d after Heal: %v", i, err)
			}
		}
		if err != nil {
			if note == "" {
				t.Fatalf("Heal found nothing to wait for, but the front's read had failed: %v", err)
			}
			return
		}
	}
}
