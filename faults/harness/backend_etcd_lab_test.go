package harness_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/leasehold-go/leasehold/faults/harness"
)

// followed waits until member j follows a leader that pred accepts, and
// returns it.
func followed(t *testing.T, b harness.MemberPartitioner, j int, pred func(int) bool) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	for {
		seen, err := b.LeaderSeen(ctx, j)
		if err == nil && pred(seen) {
			return seen
		}
		select {
		case <-ctx.Done():
			t.Fatalf("member %d: last leader seen %d (%v)", j, seen, err)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// The etcd backend runs its members in the run's lab, on the lab's
// addresses: isolating the leader gets the followers a new one, the old
// leader loses its own, and after the heal the members agree on one.
func TestEtcdMembersInTheLab(t *testing.T) {
	b := &harness.Etcd{}
	if err := b.Start(t.Context(), t.TempDir()); err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	lab := b.Lab()
	if lab == nil || b.Members() != 3 {
		t.Fatalf("lab %v, %d members: the members are not in a lab", lab, b.Members())
	}
	for i, ep := range b.Endpoints() {
		if !strings.HasPrefix(ep, lab.Addr(i)+":") {
			t.Fatalf("member %d listens on %s, not on its lab address %s", i, ep, lab.Addr(i))
		}
	}
	l, err := b.LeaderMember(t.Context())
	if err != nil {
		t.Fatal(err)
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
	// Every member follows the leader member 0 follows, once they agree.
	for end := time.Now().Add(30 * time.Second); ; {
		lead := followed(t, b, 0, func(s int) bool { return s >= 0 })
		agree := true
		for j := 1; j < 3; j++ {
			agree = agree && followed(t, b, j, func(s int) bool { return s >= 0 }) == lead
		}
		if agree {
			return
		}
		if time.Now().After(end) {
			t.Fatal("the members follow different leaders 30 s after the heal")
		}
	}
}
