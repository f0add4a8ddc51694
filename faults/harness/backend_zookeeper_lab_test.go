package harness_test

import (
	"testing"
	"time"

	"github.com/leasehold-go/leasehold/faults/harness"
)

// The ZooKeeper backend runs its servers in the run's lab, on the lab's
// addresses, and pins holder slots 1 and 2 to one server each: isolating
// the leader gets the followers a new one, the old leader loses its own
// (it stops serving), and after the heal the servers agree on one.
func TestZooKeeperMembersInTheLab(t *testing.T) {
	b := &harness.ZooKeeper{}
	if err := b.Start(t.Context(), t.TempDir()); err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	eps := b.Endpoints()
	inTheLab(t, b, eps)
	if u := b.HolderURL(0, eps); u != b.URL(eps) {
		t.Fatalf("slot 0's URL %s does not name every server", u)
	}
	for slot, m := range b.AttachedMembers() {
		if u := b.HolderURL(slot+1, eps); u != "zk://"+eps[m] {
			t.Fatalf("slot %d's URL %s is not pinned to server %d (%s)", slot+1, u, m, eps[m])
		}
	}
	l, err := b.LeaderMember(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for j := range 3 {
		followed(t, b, j, func(s int) bool { return s == l })
	}
	isolateLeaderAndHeal(t, b, 60*time.Second)
	if note, err := b.Heal(t.Context()); err != nil || note != "" {
		t.Fatalf("after the heal the ensemble does not commit: %q, %v", note, err)
	}
}
