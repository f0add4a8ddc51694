package etcd_test

import (
	"errors"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/etcd"
	"github.com/leasehold-go/leasehold/internal/testserver"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// namesUsed returns every etcd key written under prefix from revision from
// until now, read from etcd's history (a watch from a past revision replays
// it), and the number of keys created.
func namesUsed(t *testing.T, cli *clientv3.Client, prefix string, from int64) (names []string, created int) {
	t.Helper()
	ctx := tctx(t)
	marker, err := cli.Put(ctx, "test-marker/"+prefix, "end")
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	// One watch over the whole key space delivers every change in
	// revision order, up to the marker.
	wch := cli.Watch(ctx, "\x00", clientv3.WithFromKey(), clientv3.WithRev(from))
	for done := false; !done; {
		resp, ok := <-wch
		if !ok || resp.Err() != nil {
			t.Fatalf("history watch ended: %v", resp.Err())
		}
		for _, e := range resp.Events {
			if e.Kv.ModRevision >= marker.Header.Revision {
				done = true
				break
			}
			if strings.HasPrefix(string(e.Kv.Key), prefix) {
				seen[string(e.Kv.Key)] = true
				if e.IsCreate() {
					created++
				}
			}
		}
	}
	for n := range seen {
		names = append(names, n)
	}
	sort.Strings(names)
	return names, created
}

// testBoundedNames acquires and releases one key through a
// leasehold.Client, plainly, waiting, and with 4 contending goroutines, and
// checks in etcd's history that the key's queue used at most 4 names. A
// Client draws a fresh owner id for every acquire: if entries were named by
// the owner, every acquisition would create a new etcd key, and etcd keeps
// each deleted one in its index until a compaction, so every later acquire
// (which ranges over the queue) would cost more.
func testBoundedNames(t *testing.T, c *testserver.Etcd) {
	st := newStore(t, c, nil)
	cli := etcdClient(t, c)
	lc, err := leasehold.New(st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer lc.Close()
	k := uniqueKey(t, "k")
	start, err := cli.Get(tctx(t), "probe")
	if err != nil {
		t.Fatal(err)
	}
	cycle := func(wait time.Duration) {
		l, err := lc.Acquire(tctx(t), k, leasehold.AcquireOptions{TTL: 5 * time.Second, Wait: wait})
		if err != nil {
			t.Errorf("acquire: %v", err)
			return
		}
		if err := l.Release(tctx(t)); err != nil {
			t.Errorf("release: %v", err)
		}
	}
	const n = 40
	for i := range 2 * n {
		cycle(time.Duration(i%2) * 30 * time.Second) // plain, then waiting
	}
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range n / 4 {
				cycle(30 * time.Second)
			}
		})
	}
	wg.Wait()
	names, puts := namesUsed(t, cli, etcd.QueuePrefix("", k), start.Header.Revision+1)
	if puts < 3*n {
		t.Fatalf("%d entries created in %d acquisitions", puts, 3*n)
	}
	if len(names) > 4 {
		var ids []string
		for _, name := range names[:min(len(names), 8)] {
			ids = append(ids, strings.TrimPrefix(name, etcd.QueuePrefix("", k)))
		}
		t.Errorf("%d acquisitions of one key used %d etcd key names, want at most 4 (one per concurrent acquire): %s ...",
			3*n, len(names), strings.Join(ids, " "))
	}
	t.Logf("%d acquisitions, %d entries created, under %d names", 3*n, puts, len(names))
}

// testRebuiltGrant uses a grant rebuilt from its key, owner and token (as
// another process holds it: no Private) to renew, fence and release, and
// checks that the same with another owner is refused and harmless.
func testRebuiltGrant(t *testing.T, c *testserver.Etcd) {
	st := newStore(t, c, nil)
	other := newStore(t, c, nil)
	cli := etcdClient(t, c)
	k := uniqueKey(t, "k")
	g, err := st.Acquire(tctx(t), areq(k, 5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	rebuilt := leasehold.Grant{Key: g.Key, Owner: g.Owner, Token: g.Token, TTL: g.TTL}
	forged := rebuilt
	forged.Owner = leasehold.NewOwnerID()
	if other.KeyOf(rebuilt) != "" || st.KeyOf(g) == "" {
		t.Errorf("KeyOf: %q for a rebuilt grant, %q for the store's", other.KeyOf(rebuilt), st.KeyOf(g))
	}
	if _, err := other.Renew(tctx(t), forged); !errors.Is(err, leasehold.ErrNotHeld) {
		t.Errorf("renew of a rebuilt grant with another owner: %v, want ErrNotHeld", err)
	}
	if err := other.Release(tctx(t), forged); !errors.Is(err, leasehold.ErrNotHeld) {
		t.Errorf("release of a rebuilt grant with another owner: %v, want ErrNotHeld", err)
	}
	if _, err := other.IsOwnerLookup(tctx(t), forged); !errors.Is(err, leasehold.ErrNotHeld) {
		t.Errorf("IsOwnerLookup of a rebuilt grant with another owner: %v, want ErrNotHeld", err)
	}
	if _, err := other.Renew(tctx(t), rebuilt); err != nil {
		t.Errorf("renew of the rebuilt grant: %v", err)
	}
	write := func(cmp clientv3.Cmp, v string) bool {
		t.Helper()
		resp, err := cli.Txn(tctx(t)).If(cmp).Then(clientv3.OpPut("test-data/"+k, v)).Commit()
		if err != nil {
			t.Fatal(err)
		}
		return resp.Succeeded
	}
	if write(other.IsOwner(rebuilt), "no") {
		t.Error("IsOwner of a grant that does not name its entry succeeded")
	}
	forgedCopy := g
	forgedCopy.Owner = forged.Owner
	if write(st.IsOwner(forgedCopy), "no") {
		t.Error("IsOwner of the store's grant with another owner succeeded")
	}
	cmp, err := other.IsOwnerLookup(tctx(t), rebuilt)
	if err != nil {
		t.Fatalf("IsOwnerLookup: %v", err)
	}
	if !write(cmp, "yes") {
		t.Error("write guarded by IsOwnerLookup of the holder refused")
	}
	if err := other.Release(tctx(t), rebuilt); err != nil {
		t.Fatalf("release of the rebuilt grant: %v", err)
	}
	if write(cmp, "stale") {
		t.Error("write guarded by a released grant's IsOwnerLookup accepted")
	}
	if _, err := st.Holder(tctx(t), k); !errors.Is(err, leasehold.ErrNotHeld) {
		t.Errorf("after the rebuilt grant's release, Holder: %v, want ErrNotHeld", err)
	}
	if _, err := st.Renew(tctx(t), g); !errors.Is(err, leasehold.ErrNotHeld) {
		t.Errorf("renew by the acquiring store after the release elsewhere: %v, want ErrNotHeld", err)
	}
}
