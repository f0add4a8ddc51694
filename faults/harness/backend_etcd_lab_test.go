package harness_test

import (
	"testing"
	"time"

	"github.com/leasehold-go/leasehold/faults/harness"
)

// The etcd backend runs its members in the run's lab, on the lab's
// addresses: isolating the leader gets the followers a new one, the old
// leader loses its own, and after the heal the members agree on one.
func TestEtcdMembersInTheLab(t *testing.T) {
	b := &harness.Etcd{}
	if err := b.Start(t.Context(), t.TempDir()); err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	inTheLab(t, b, b.Endpoints())
	isolateLeaderAndHeal(t, b, 30*time.Second)
}
