package etcd

import (
	"errors"
	"testing"
	"time"

	"github.com/leasehold-go/leasehold"
)

// TestReleaseTracked covers the release of a grant the store tracks, which
// checks the owner in the process and deletes by name: another owner with
// the grant's Private is refused and deletes nothing; a release whose
// delete was not answered keeps the grant tracked and never lets the
// session reuse the name, so a delete applied late cannot reach a later
// grant of the key; an answered one frees the name for the next acquire.
func TestReleaseTracked(t *testing.T) {
	st, cli, ctx := newTestStore(t)
	acquire := func() (leasehold.Grant, *grantRec) {
		t.Helper()
		g, err := st.Acquire(ctx, leasehold.AcquireRequest{Key: "rel/k", Owner: leasehold.NewOwnerID(), TTL: 5 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		return g, g.Private.(*grantRec)
	}
	exists := func(name string) bool {
		t.Helper()
		r, err := cli.Get(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		return len(r.Kvs) == 1
	}

	g, rec := acquire()
	forged := g
	forged.Owner = leasehold.NewOwnerID()
	if err := st.Release(ctx, forged); !errors.Is(err, leasehold.ErrNotHeld) {
		t.Errorf("release with another owner and the grant's Private: %v, want ErrNotHeld", err)
	}
	if !exists(rec.name) {
		t.Fatal("a release with another owner deleted the entry")
	}

	// A release whose delete got no answer.
	r, ok := rec.sess.releasing(rec.name, g.Key, rec.owner, rec.token)
	if !ok {
		t.Fatal("releasing: the tracked grant was not found")
	}
	rec.sess.released(r, false)
	if _, err := st.Renew(ctx, g); err != nil {
		t.Fatalf("after an unanswered release the grant is no longer tracked: renew: %v", err)
	}
	if err := st.Release(ctx, g); err != nil {
		t.Fatalf("release: %v", err)
	}
	if err := st.Release(ctx, g); !errors.Is(err, leasehold.ErrNotHeld) {
		t.Errorf("second release: %v, want ErrNotHeld", err)
	}
	g2, rec2 := acquire()
	if rec2.name == rec.name {
		t.Fatalf("the name of a release that got no answer was used again: %s", rec.name)
	}
	if _, err := cli.Delete(ctx, rec.name); err != nil { // the late delete
		t.Fatal(err)
	}
	if !exists(rec2.name) {
		t.Fatal("a late delete of the old name removed the new grant")
	}

	// An answered release frees its name for the next acquire.
	if err := st.Release(ctx, g2); err != nil {
		t.Fatalf("release: %v", err)
	}
	g3, rec3 := acquire()
	if rec3.name != rec2.name {
		t.Errorf("an answered release did not free its name: %s, then %s", rec2.name, rec3.name)
	}
	if err := st.Release(ctx, g3); err != nil {
		t.Fatalf("release: %v", err)
	}
}
