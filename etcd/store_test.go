package etcd_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/etcd"
	"github.com/leasehold-go/leasehold/internal/testserver"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// newStore returns a store on a fresh client of c, closed when t ends.
func newStore(t *testing.T, c *testserver.Etcd, opts *etcd.Options) *etcd.Store {
	t.Helper()
	st := etcd.New(etcdClient(t, c), opts)
	t.Cleanup(func() { _ = st.Close() })
	return st
}

func uniqueKey(t *testing.T, suffix string) string {
	return "test/" + t.Name() + "/" + time.Now().Format("150405.000000000") + "/" + suffix
}

func areq(k string, ttl time.Duration) leasehold.AcquireRequest {
	return leasehold.AcquireRequest{Key: k, Owner: leasehold.NewOwnerID(), Label: "test", TTL: ttl}
}

func tctx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// eventually polls cond every 20 ms until it holds or limit passes.
func eventually(t *testing.T, limit time.Duration, what string, cond func() bool) {
	t.Helper()
	end := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(end) {
			t.Fatalf("%s: not within %s", what, limit)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func leaseOf(t *testing.T, cli *clientv3.Client, name string) clientv3.LeaseID {
	t.Helper()
	resp, err := cli.Get(tctx(t), name)
	if err != nil || len(resp.Kvs) == 0 {
		t.Fatalf("get %s: %v (%d kvs)", name, err, len(resp.Kvs))
	}
	return clientv3.LeaseID(resp.Kvs[0].Lease)
}

func testSharedSession(t *testing.T, c *testserver.Etcd) {
	st := newStore(t, c, nil)
	cli := etcdClient(t, c)
	leases := map[time.Duration]map[clientv3.LeaseID]int{}
	var gs []leasehold.Grant
	for _, ttl := range []time.Duration{5 * time.Second, 10 * time.Second} {
		leases[ttl] = map[clientv3.LeaseID]int{}
		for i := 0; i < 50; i++ {
			g, err := st.Acquire(tctx(t), areq(uniqueKey(t, fmt.Sprint(i)), ttl))
			if err != nil {
				t.Fatalf("acquire: %v", err)
			}
			gs = append(gs, g)
			leases[ttl][leaseOf(t, cli, st.KeyOf(g))]++
		}
	}
	for ttl, ls := range leases {
		if len(ls) != 1 {
			t.Errorf("TTL %s: 50 grants on %d etcd leases, want 1", ttl, len(ls))
		}
	}
	for _, g := range gs {
		if err := st.Release(tctx(t), g); err != nil {
			t.Fatalf("release: %v", err)
		}
	}
}

func testSessionLoss(t *testing.T, c *testserver.Etcd) {
	st := newStore(t, c, nil)
	cli := etcdClient(t, c)
	lc, err := leasehold.New(st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer lc.Close()
	k1, k2 := uniqueKey(t, "1"), uniqueKey(t, "2")
	r1 := areq(k1, 2*time.Second)
	g1, err := st.Acquire(tctx(t), r1)
	if err != nil {
		t.Fatalf("acquire: %v", err)
	}
	l, err := lc.Acquire(tctx(t), k2, leasehold.AcquireOptions{TTL: 2 * time.Second})
	if err != nil {
		t.Fatalf("client acquire: %v", err)
	}
	id := leaseOf(t, cli, st.KeyOf(g1))
	if id2 := leaseOf(t, cli, st.KeyOf(l.Grant())); id2 != id {
		t.Fatalf("grants of one TTL on leases %x and %x", id, id2)
	}
	// The session's etcd lease ends behind the store's back.
	if _, err := cli.Revoke(tctx(t), id); err != nil {
		t.Fatalf("revoke: %v", err)
	}
	select {
	case <-g1.Lost:
	case <-time.After(10 * time.Second):
		t.Fatal("Grant.Lost not closed within 10s of the session lease's revocation")
	}
	select {
	case <-l.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("client lease not cancelled within 10s of the session lease's revocation")
	}
	if !errors.Is(l.Err(), leasehold.ErrLost) {
		t.Errorf("lease cause = %v, want ErrLost", l.Err())
	}
	if _, err := st.Renew(tctx(t), g1); !errors.Is(err, leasehold.ErrNotHeld) {
		t.Errorf("renew on a lost session: got %v, want ErrNotHeld", err)
	}
	g3, err := st.Acquire(tctx(t), r1)
	if err != nil {
		t.Fatalf("acquire after the loss (a new session): %v", err)
	}
	if g3.Token <= g1.Token {
		t.Errorf("token after loss %d not greater than %d", g3.Token, g1.Token)
	}
	if leaseOf(t, cli, st.KeyOf(g3)) == id {
		t.Error("new grant on the revoked lease")
	}
	_ = st.Release(tctx(t), g3)
}

func testCloseKeeps(t *testing.T, c *testserver.Etcd) {
	st1 := etcd.New(etcdClient(t, c), nil)
	st2 := newStore(t, c, nil)
	k := uniqueKey(t, "k")
	g, err := st1.Acquire(tctx(t), areq(k, time.Second))
	if err != nil {
		t.Fatalf("acquire: %v", err)
	}
	if err := st1.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}
	if h, err := st2.Holder(tctx(t), k); err != nil || h.Token != g.Token {
		t.Fatalf("Holder right after Close = %+v, %v; want still held with token %d", h, err, g.Token)
	}
	if _, err := st1.Acquire(tctx(t), areq(uniqueKey(t, "x"), time.Second)); !errors.Is(err, leasehold.ErrClosed) {
		t.Errorf("acquire on a closed store: got %v, want ErrClosed", err)
	}
	eventually(t, 15*time.Second, "the closed store's grant expiring by its etcd lease", func() bool {
		_, err := st2.Holder(tctx(t), k)
		return errors.Is(err, leasehold.ErrNotHeld)
	})
}

func testIdleRevoked(t *testing.T, c *testserver.Etcd) {
	st := newStore(t, c, &etcd.Options{IdleTimeout: -1})
	cli := etcdClient(t, c)
	k := uniqueKey(t, "k")
	g, err := st.Acquire(tctx(t), areq(k, 3*time.Second))
	if err != nil {
		t.Fatalf("acquire: %v", err)
	}
	id := leaseOf(t, cli, st.KeyOf(g))
	if err := st.Release(tctx(t), g); err != nil {
		t.Fatalf("release: %v", err)
	}
	eventually(t, 10*time.Second, "the idle session's lease revoked", func() bool {
		r, err := cli.TimeToLive(tctx(t), id)
		return err == nil && r.TTL == -1
	})
	g2, err := st.Acquire(tctx(t), areq(k, 3*time.Second))
	if err != nil {
		t.Fatalf("acquire on a new session: %v", err)
	}
	if leaseOf(t, cli, st.KeyOf(g2)) == id {
		t.Error("grant on the revoked lease")
	}
	_ = st.Release(tctx(t), g2)
}

// countEntries counts the entries of k's queue: its holder and waiters.
func countEntries(t *testing.T, cli *clientv3.Client, k string) int64 {
	resp, err := cli.Get(tctx(t), etcd.QueuePrefix("", k), clientv3.WithPrefix(), clientv3.WithCountOnly())
	if err != nil {
		t.Fatalf("count entries: %v", err)
	}
	return resp.Count
}

func testPrefixIsolation(t *testing.T, c *testserver.Etcd) {
	st := newStore(t, c, nil)
	base := uniqueKey(t, "")
	keys := []string{base + "a", base + "a/x", base + "ab", base + "a%2Fx", base + "a/"}
	// No storage name (an entry, or the queue prefix) of one key is a prefix
	// of another key's.
	const lease = clientv3.LeaseID(0x694d9a6b1c2e3f40)
	for _, k1 := range keys {
		for _, k2 := range keys {
			if k1 == k2 {
				continue
			}
			for _, n1 := range []string{etcd.QueuePrefix("", k1), etcd.EntryKey("", k1, lease, 0), etcd.EntryKey("", k1, lease, 12)} {
				for _, n2 := range []string{etcd.QueuePrefix("", k2), etcd.EntryKey("", k2, lease, 0), etcd.EntryKey("", k2, lease, 12)} {
					if strings.HasPrefix(n2, n1) {
						t.Errorf("storage name %q of %q is a prefix of %q of %q", n1, k1, n2, k2)
					}
				}
			}
		}
	}
	// A queued waiter on "a" does not block "a/x" or "ab".
	cli := etcdClient(t, c)
	ga, err := st.Acquire(tctx(t), areq(keys[0], 5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	wctx, cancel := context.WithCancel(tctx(t))
	done := make(chan error, 1)
	go func() {
		g, err := st.AcquireWait(wctx, areq(keys[0], 5*time.Second))
		if err == nil {
			_ = st.Release(context.Background(), g)
		}
		done <- err
	}()
	eventually(t, 10*time.Second, "waiter queued", func() bool { return countEntries(t, cli, keys[0]) == 2 })
	var gs []leasehold.Grant
	for _, k := range keys[1:] {
		g, err := st.Acquire(tctx(t), areq(k, 5*time.Second))
		if err != nil {
			t.Errorf("acquire %q while %q is held and queued on: %v", k, keys[0], err)
			continue
		}
		gs = append(gs, g)
	}
	hs, err := st.List(tctx(t), base+"a")
	if err != nil {
		t.Fatalf("list: %v", err)
	}
	if len(hs) != len(keys) {
		t.Errorf("List(%q) = %d holders, want %d: %+v", base+"a", len(hs), len(keys), hs)
	}
	hs, err = st.List(tctx(t), base+"a/")
	if err != nil {
		t.Fatalf("list: %v", err)
	}
	var got []string
	for _, h := range hs {
		got = append(got, strings.TrimPrefix(h.Key, base))
	}
	if strings.Join(got, ",") != "a/,a/x" {
		t.Errorf("List(%q) = %v, want [a/ a/x]", base+"a/", got)
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled waiter: %v", err)
	}
	for _, g := range append(gs, ga) {
		_ = st.Release(tctx(t), g)
	}
}

func testFIFO(t *testing.T, c *testserver.Etcd) {
	st := newStore(t, c, nil)
	cli := etcdClient(t, c)
	k := uniqueKey(t, "k")
	h, err := st.Acquire(tctx(t), areq(k, 5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	const n = 5
	var (
		mu    sync.Mutex
		order []int
		wg    sync.WaitGroup
	)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			g, err := st.AcquireWait(tctx(t), areq(k, 5*time.Second))
			if err != nil {
				t.Errorf("waiter %d: %v", i, err)
				return
			}
			mu.Lock()
			order = append(order, i)
			mu.Unlock()
			time.Sleep(10 * time.Millisecond)
			if err := st.Release(context.Background(), g); err != nil {
				t.Errorf("waiter %d release: %v", i, err)
			}
		}()
		// Queue the waiters one after the other.
		eventually(t, 10*time.Second, "waiter queued", func() bool { return countEntries(t, cli, k) == int64(i+2) })
	}
	if _, err := st.Acquire(tctx(t), areq(k, 5*time.Second)); !errors.Is(err, leasehold.ErrHeld) {
		t.Errorf("plain acquire while held and queued: %v", err)
	}
	if err := st.Release(tctx(t), h); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	if fmt.Sprint(order) != "[0 1 2 3 4]" {
		t.Errorf("waiters served in order %v, want [0 1 2 3 4]", order)
	}
	if n := countEntries(t, cli, k); n != 0 {
		t.Errorf("%d queue entries left", n)
	}
}

func testWaiterLeaves(t *testing.T, c *testserver.Etcd) {
	st := newStore(t, c, nil)
	cli := etcdClient(t, c)
	k := uniqueKey(t, "k")
	h, err := st.Acquire(tctx(t), areq(k, 5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(tctx(t), 300*time.Millisecond)
	defer cancel()
	if _, err := st.AcquireWait(ctx, areq(k, 5*time.Second)); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("waiter that ran out of time: %v", err)
	}
	eventually(t, 10*time.Second, "waiter's entry removed", func() bool { return countEntries(t, cli, k) == 1 })
	if err := st.Release(tctx(t), h); err != nil {
		t.Fatal(err)
	}
	g, err := st.Acquire(tctx(t), areq(k, 5*time.Second))
	if err != nil {
		t.Fatalf("acquire after the waiter left: %v", err)
	}
	_ = st.Release(tctx(t), g)
}

func testSubscribe(t *testing.T, c *testserver.Etcd) {
	st := newStore(t, c, nil)
	k := uniqueKey(t, "k")
	h, err := st.Acquire(tctx(t), areq(k, 5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	ch, stop, err := st.Subscribe(tctx(t), k)
	if err != nil {
		t.Fatalf("subscribe: %v", err)
	}
	defer stop()
	select {
	case <-ch:
		t.Fatal("woken while still held")
	case <-time.After(50 * time.Millisecond):
	}
	if err := st.Release(tctx(t), h); err != nil {
		t.Fatal(err)
	}
	select {
	case <-ch:
	case <-time.After(10 * time.Second):
		t.Fatal("no wake-up within 10s of the release")
	}
}

func testRenewMany(t *testing.T, c *testserver.Etcd) {
	st := newStore(t, c, nil)
	other := newStore(t, c, nil)
	const n = 150 // more than one transaction's worth
	var gs []leasehold.Grant
	for i := 0; i < n; i++ {
		g, err := st.Acquire(tctx(t), areq(uniqueKey(t, fmt.Sprint(i)), 5*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		gs = append(gs, g)
	}
	// A stale grant (released, then the key taken again by the same owner),
	r := areq(uniqueKey(t, "stale"), 5*time.Second)
	stale, err := st.Acquire(tctx(t), r)
	if err != nil {
		t.Fatal(err)
	}
	_ = st.Release(tctx(t), stale)
	current, err := st.Acquire(tctx(t), r)
	if err != nil {
		t.Fatal(err)
	}
	// a forged owner, and a grant of another store handle.
	forged := gs[0]
	forged.Owner = leasehold.NewOwnerID()
	foreign, err := other.Acquire(tctx(t), areq(uniqueKey(t, "foreign"), 5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	all := append(append([]leasehold.Grant{}, gs...), stale, current, forged, foreign)
	res, err := st.RenewMany(tctx(t), all)
	if err != nil {
		t.Fatalf("RenewMany: %v", err)
	}
	if len(res) != len(all) {
		t.Fatalf("%d results for %d grants", len(res), len(all))
	}
	for i, r := range res[:n] {
		if r.Err != nil || r.Grant.Token != gs[i].Token || r.Grant.TTL < 5*time.Second {
			t.Errorf("grant %d: %+v", i, r)
		}
	}
	want := []bool{false, true, false, true} // stale, current, forged, foreign
	for j, ok := range want {
		r := res[n+j]
		if ok && r.Err != nil {
			t.Errorf("result %d: %v, want renewed", n+j, r.Err)
		}
		if !ok && !errors.Is(r.Err, leasehold.ErrNotHeld) {
			t.Errorf("result %d: %v, want ErrNotHeld", n+j, r.Err)
		}
	}
	// The forged call did not harm the real grant.
	if _, err := st.Renew(tctx(t), gs[0]); err != nil {
		t.Errorf("renew of the real grant after a forged batch renew: %v", err)
	}
	for _, g := range append(gs, current) {
		_ = st.Release(tctx(t), g)
	}
	_ = other.Release(tctx(t), foreign)
}

func testIsOwner(t *testing.T, c *testserver.Etcd) {
	st := newStore(t, c, nil)
	cli := etcdClient(t, c)
	k := uniqueKey(t, "k")
	data := "test-data/" + k
	write := func(g leasehold.Grant, v string) bool {
		t.Helper()
		resp, err := cli.Txn(tctx(t)).If(st.IsOwner(g)).Then(clientv3.OpPut(data, v)).Commit()
		if err != nil {
			t.Fatalf("txn: %v", err)
		}
		return resp.Succeeded
	}
	g1, err := st.Acquire(tctx(t), areq(k, 5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if !write(g1, "one") {
		t.Fatal("write by the holder refused")
	}
	_ = st.Release(tctx(t), g1)
	if write(g1, "stale") {
		t.Fatal("write by a released holder accepted")
	}
	g2, err := st.Acquire(tctx(t), areq(k, 5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if write(g1, "stale") {
		t.Fatal("write by the previous holder accepted while another holds the key")
	}
	if !write(g2, "two") {
		t.Fatal("write by the new holder refused")
	}
	if cmp := etcd.IsOwner("", g2); string(cmp.KeyBytes()) != st.KeyOf(g2) {
		t.Errorf("IsOwner with the default prefix compares %q, want %q", cmp.KeyBytes(), st.KeyOf(g2))
	}
	resp, err := cli.Get(tctx(t), data)
	if err != nil || len(resp.Kvs) == 0 || string(resp.Kvs[0].Value) != "two" {
		t.Fatalf("data = %v, %v; want two", resp, err)
	}
	_ = st.Release(tctx(t), g2)
}

func testFencedTxn(t *testing.T, c *testserver.Etcd) {
	st := newStore(t, c, nil)
	cli := etcdClient(t, c)
	k := uniqueKey(t, "k")
	fk, data := "test-fence/"+k, "test-data/"+k
	write := func(tok uint64, extra ...clientv3.Cmp) bool {
		t.Helper()
		ok, err := etcd.FencedTxn(tctx(t), cli, fk, tok, extra, clientv3.OpPut(data, fmt.Sprint(tok)))
		if err != nil {
			t.Fatalf("FencedTxn: %v", err)
		}
		return ok
	}
	for _, step := range []struct {
		tok  uint64
		want bool
	}{{10, true}, {5, false}, {10, true}, {11, true}, {9, false}, {1 << 40, true}, {11, false}} {
		if got := write(step.tok); got != step.want {
			t.Errorf("write with token %d: accepted %v, want %v", step.tok, got, step.want)
		}
	}
	resp, err := cli.Get(tctx(t), fk)
	if err != nil || len(resp.Kvs) == 0 {
		t.Fatal(err)
	}
	if v, _ := etcd.DecodeFence(resp.Kvs[0].Value); v != 1<<40 {
		t.Errorf("fence = %d, want %d", v, uint64(1<<40))
	}
	// With the lease as an extra guard, a higher token of a lease no longer
	// held is refused and leaves the fence alone.
	g, err := st.Acquire(tctx(t), areq(k, 5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	_ = st.Release(tctx(t), g)
	if write(1<<41, st.IsOwner(g)) {
		t.Error("write guarded by a released lease accepted")
	}
	resp, _ = cli.Get(tctx(t), fk)
	if v, _ := etcd.DecodeFence(resp.Kvs[0].Value); v != 1<<40 {
		t.Errorf("a refused write moved the fence to %d", v)
	}
}

func testTTLRounding(t *testing.T, c *testserver.Etcd) {
	st := newStore(t, c, nil)
	if info := st.Info(); info.Name != "etcd" || info.MinTTL != time.Second || !info.SafeTokens || !strings.Contains(info.TokenCaveat, "--bump-revision") {
		t.Errorf("Info = %+v", info)
	}
	for _, tc := range []struct{ ask, want time.Duration }{
		{time.Second, time.Second}, {1500 * time.Millisecond, 2 * time.Second}, {2 * time.Second, 2 * time.Second},
	} {
		g, err := st.Acquire(tctx(t), areq(uniqueKey(t, fmt.Sprint(tc.ask)), tc.ask))
		if err != nil {
			t.Fatal(err)
		}
		if g.TTL != tc.want {
			t.Errorf("TTL %s granted as %s, want %s (rounded up to seconds)", tc.ask, g.TTL, tc.want)
		}
		_ = st.Release(tctx(t), g)
	}
	if _, err := st.Acquire(tctx(t), areq(uniqueKey(t, "short"), 999*time.Millisecond)); !errors.Is(err, leasehold.ErrInvalidTTL) {
		t.Errorf("TTL below 1s: got %v, want ErrInvalidTTL", err)
	}
}
