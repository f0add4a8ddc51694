package harness_test

import (
	"strings"
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
	lab := b.Lab()
	if lab == nil || b.Members() != 3 {
		t.Fatalf("lab %v, %d members: the servers are not in a lab", lab, b.Members())
	}
	eps := b.Endpoints()
	for i, ep := range eps {
		if !strings.HasPrefix(ep, lab.Addr(i)+":") {
			t.Fatalf("server %d listens on %s, not on its lab address %s", i, ep, lab.Addr(i))
		}
	}
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
	if err := lab.Isolate(t.Context(), l); err != nil {
		t.Fatal(err)
	}
	f := (l + 1) % 3
	next := followed(t, b, f, func(s int) bool { return s >= 0 && s != l })
	followed(t, b, l, func(s int) bool { return s < 0 || s == next })
	if err := lab.Heal(t.Context()); err != nil {
		t.Fatal(err)
	}
	for end := time.Now().Add(60 * time.Second); ; {
		lead := followed(t, b, 0, func(s int) bool { return s >= 0 })
		agree := true
		for j := 1; j < 3; j++ {
			agree = agree && followed(t, b, j, func(s int) bool { return s >= 0 }) == lead
		}
		if agree {
			break
		}
		if time.Now().After(end) {
			t.Fatal("the servers follow different leaders 60 s after the heal")
		}
	}
	if note, err := b.Heal(t.Context()); err != nil || note != "" {
		t.Fatalf("after the heal the ensemble does not commit: %q, %v", note, err)
	}
}
