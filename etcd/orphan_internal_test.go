package etcd

import (
	"testing"
	"time"

	"github.com/leasehold-go/leasehold"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// TestOrphanCleanup stands in for an acquire whose put was applied but whose
// reply was lost: housekeeping deletes such an entry, found by its name and
// matched by the owner in its value, and frees its slot. It leaves alone a
// tracked grant, and an entry of that name that holds another owner (another
// attempt's): a clean-up never reaches a later grant.
func TestOrphanCleanup(t *testing.T) {
	st, cli, ctx := newTestStore(t)

	req := leasehold.AcquireRequest{Key: "orphan/a", Owner: leasehold.NewOwnerID(), Label: "x", TTL: 2 * time.Second}
	g, err := st.Acquire(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	ss := g.Private.(*grantRec).sess
	// lostPut claims a slot of key for owner as an acquire does, puts an
	// entry holding stored's owner there, and leaves it to housekeeping as
	// an acquire whose reply was lost.
	lostPut := func(key, owner, stored string) entry {
		e, dup, err := ss.claim(key, ownerHash(owner))
		if err != nil || dup {
			t.Fatalf("claim: %v, dup %v", err, dup)
		}
		if _, err := cli.Put(ctx, e.name, encodeValue(ownerHash(stored), "x"), clientv3.WithLease(ss.id)); err != nil {
			t.Fatal(err)
		}
		ss.AddOrphan(orphan{entry: e})
		ss.finish(e, true)
		return e
	}
	o1, o2 := leasehold.NewOwnerID(), leasehold.NewOwnerID()
	lost := lostPut("orphan/b", o1, o1)
	other := lostPut("orphan/c", o1, o2) // the name holds another owner's entry
	ref := g.Private.(*grantRec).entry
	ss.AddOrphan(orphan{entry: ref})                                                                       // the tracked grant itself
	ss.AddOrphan(orphan{entry: entry{key: ref.key, slot: ref.slot, name: ref.name, owner: ownerHash(o2)}}) // its name, another owner
	ss.Poke()
	deadline := time.Now().Add(10 * time.Second)
	for {
		r, err := cli.Get(ctx, lost.name)
		if err != nil {
			t.Fatal(err)
		}
		pending := ss.Orphans()
		if len(r.Kvs) == 0 && pending == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the orphan of a lost acquire reply was not deleted within 10s (%d kvs, %d orphans pending)", len(r.Kvs), pending)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if r, err := cli.Get(ctx, other.name); err != nil || len(r.Kvs) != 1 {
		t.Errorf("the entry of another owner under an orphan's name was deleted: %v, %d kvs", err, len(r.Kvs))
	}
	ss.Mu.Lock()
	freed := len(ss.slots["orphan/b"]) == 0
	kept := len(ss.slots[req.Key]) == 1 && ss.slots[req.Key][ref.slot] == ref.owner
	ss.Mu.Unlock()
	if !freed {
		t.Error("the cleaned orphan's slot is still claimed")
	}
	if !kept {
		t.Error("the tracked grant's slot was freed by an orphan check")
	}
	if _, err := st.Renew(ctx, g); err != nil {
		t.Errorf("the tracked grant was harmed by the orphan check: %v", err)
	}
	if err := st.Release(ctx, g); err != nil {
		t.Errorf("release: %v", err)
	}
}
