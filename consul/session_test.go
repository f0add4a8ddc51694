package consul_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/consul/api"

	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/consul"
	"github.com/leasehold-go/leasehold/internal/testserver"
)

// entry reads the Consul KV entry that holds key in st.
func entry(t testing.TB, cli *api.Client, st *consul.Store, key string) *api.KVPair {
	t.Helper()
	kv, _, err := cli.KV().Get(st.KeyOf(key), nil)
	if err != nil {
		t.Fatal(err)
	}
	if kv == nil {
		t.Fatalf("no entry for %q", key)
	}
	return kv
}

// testSharedSession: the grants of one TTL class share one Consul session,
// created with no health checks, behavior release, the class's TTL x 1.5
// (at least Consul's 10 s) and a lock-delay of the class's TTL.
func testSharedSession(t *testing.T, c *testserver.Consul) {
	st := newStore(t, c, 0)
	cli := consulClient(t, c, 0)
	sessions := map[string]bool{}
	for i := range 20 {
		k := uniqueKey(t, fmt.Sprint(i))
		g, err := st.Acquire(tctx(t), areq(k, 2*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		kv := entry(t, cli, st, k)
		if tokenIn(t, kv) != g.Token || kv.Flags != consul.Flags {
			t.Fatalf("entry %+v for grant token %d", kv, g.Token)
		}
		sessions[kv.Session] = true
		defer st.Release(tctx(t), g)
	}
	if len(sessions) != 1 {
		t.Fatalf("20 grants of one TTL on %d sessions, want 1", len(sessions))
	}
	for id := range sessions {
		se, _, err := cli.Session().Info(id, nil)
		if err != nil || se == nil {
			t.Fatalf("session %s: %+v, %v", id, se, err)
		}
		if se.TTL != "10s" || se.Behavior != api.SessionBehaviorRelease || se.LockDelay != 2*time.Second || len(se.NodeChecks) != 0 || len(se.Checks) != 0 {
			t.Errorf("session %+v: want TTL 10s, behavior release, lock-delay 2s, no checks", se)
		}
	}
	// A 20 s class gets a session of its own, 1.5 x as long.
	g, err := st.Acquire(tctx(t), areq(uniqueKey(t, "long"), 20*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Release(tctx(t), g)
	se, _, err := cli.Session().Info(entry(t, cli, st, g.Key).Session, nil)
	if err != nil || se == nil || sessions[se.ID] || se.TTL != "30s" || se.LockDelay != 20*time.Second {
		t.Errorf("session of a 20 s grant: %+v, %v; want its own, TTL 30s, lock-delay 20s", se, err)
	}
}

// testSessionLoss destroys the store's session at the server (as a TTL
// expiry or an operator would end it): every lease on it is lost at once,
// its context cancelled with ErrNotHeld; lock-delay then keeps the keys
// from another owner for the class's TTL; the next acquire gets a new
// session and a greater token.
func testSessionLoss(t *testing.T, c *testserver.Consul) {
	st := newStore(t, c, 0)
	cli := consulClient(t, c, 0)
	lc, err := leasehold.New(st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer lc.Close()
	const ttl = 2 * time.Second
	var ls []*leasehold.Lease
	for i := range 3 {
		l, err := lc.Acquire(tctx(t), uniqueKey(t, fmt.Sprint(i)), leasehold.AcquireOptions{TTL: ttl})
		if err != nil {
			t.Fatal(err)
		}
		ls = append(ls, l)
	}
	sid := entry(t, cli, st, ls[0].Key()).Session
	destroyed := time.Now()
	if _, err := cli.Session().Destroy(sid, nil); err != nil {
		t.Fatal(err)
	}
	for _, l := range ls {
		select {
		case <-l.Done():
		case <-time.After(10 * time.Second):
			t.Fatalf("lease %s still live 10 s after its session was destroyed", l.Key())
		}
		if err := l.Err(); !errors.Is(err, leasehold.ErrLost) || !errors.Is(err, leasehold.ErrNotHeld) {
			t.Errorf("lease %s ended with %v, want a LostError wrapping ErrNotHeld", l.Key(), err)
		}
	}
	k := ls[0].Key()
	other := newStore(t, c, 0)
	_, err = other.Acquire(tctx(t), areq(k, ttl))
	if time.Since(destroyed) < ttl {
		var he *leasehold.HeldError
		if !errors.As(err, &he) || !strings.Contains(he.Label, "lock-delay") {
			t.Errorf("acquire within the lock-delay: %v, want a HeldError naming the lock-delay", err)
		}
	}
	g := acquireEventually(t, st, areq(k, ttl), 10*time.Second)
	if g.Token <= ls[0].Token() {
		t.Errorf("token after the session's loss %d, not above %d", g.Token, ls[0].Token())
	}
	if s2 := entry(t, cli, st, k).Session; s2 == sid {
		t.Errorf("the new grant is on the destroyed session %s", sid)
	}
	_ = st.Release(tctx(t), g)
}

// acquireEventually retries r on st until it is granted, for up to limit.
func acquireEventually(t *testing.T, st leasehold.Store, r leasehold.AcquireRequest, limit time.Duration) leasehold.Grant {
	t.Helper()
	var g leasehold.Grant
	var err error
	eventually(t, limit, fmt.Sprintf("grant of %q (last error: %v)", r.Key, &err), func() bool {
		g, err = st.Acquire(tctx(t), r)
		return err == nil
	})
	return g
}

// testDeletedKey deletes a key's entry between grants: Consul's LockIndex
// starts again at 1, so it is no fence; the token, floored by the agent's
// clock and the store's highest token, still increases.
func testDeletedKey(t *testing.T, c *testserver.Consul) {
	st := newStore(t, c, 0)
	cli := consulClient(t, c, 0)
	k := uniqueKey(t, "k")
	var last uint64
	for i := range 3 {
		g, err := st.Acquire(tctx(t), areq(k, time.Second))
		if err != nil {
			t.Fatal(err)
		}
		kv := entry(t, cli, st, k)
		if g.Token <= last {
			t.Fatalf("grant %d after the entry was deleted: token %d, not above %d", i, g.Token, last)
		}
		if kv.LockIndex != 1 {
			t.Fatalf("grant %d: LockIndex %d, want 1 (the entry was deleted, so Consul starts it again)", i, kv.LockIndex)
		}
		last = g.Token
		if err := st.Release(tctx(t), g); err != nil {
			t.Fatal(err)
		}
		if _, err := cli.KV().Delete(st.KeyOf(k), nil); err != nil {
			t.Fatal(err)
		}
	}
	// A held entry deleted behind the store: the grant is refused at its
	// next renewal, and the next grant's token is still greater.
	g, err := st.Acquire(tctx(t), areq(k, time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cli.KV().Delete(st.KeyOf(k), nil); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Renew(tctx(t), g); !errors.Is(err, leasehold.ErrNotHeld) || !strings.Contains(err.Error(), "gone") {
		t.Errorf("renew of a grant whose entry was deleted: %v, want ErrNotHeld saying the entry is gone", err)
	}
	g2, err := st.Acquire(tctx(t), areq(k, time.Second))
	if err != nil || g2.Token <= g.Token {
		t.Fatalf("acquire after the held entry was deleted: token %d, %v; want above %d", g2.Token, err, g.Token)
	}
	_ = st.Release(tctx(t), g2)
}

// testCloseKeeps: Close does not release; another Store value renews and
// releases the grant by its key, owner and token (PortableGrants, as the
// CLI's one-shot commands do).
func testCloseKeeps(t *testing.T, c *testserver.Consul) {
	k := uniqueKey(t, "k")
	st := openURL(t, c.URL(0))
	g, err := st.Acquire(tctx(t), areq(k, time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	other := newStore(t, c, 0)
	if h, err := other.Holder(tctx(t), k); err != nil || h.Token != g.Token {
		t.Fatalf("after Close: Holder %+v, %v; want token %d", h, err, g.Token)
	}
	foreign := leasehold.Grant{Key: g.Key, Owner: g.Owner, Token: g.Token, TTL: g.TTL}
	wrong := foreign
	wrong.Owner = leasehold.NewOwnerID()
	if _, err := other.Renew(tctx(t), wrong); !errors.Is(err, leasehold.ErrNotHeld) {
		t.Errorf("renew by another owner: %v, want ErrNotHeld", err)
	}
	if err := other.Release(tctx(t), wrong); !errors.Is(err, leasehold.ErrNotHeld) {
		t.Errorf("release by another owner: %v, want ErrNotHeld", err)
	}
	r, err := other.Renew(tctx(t), foreign)
	if err != nil || r.TTL <= 0 || r.TTL > time.Second {
		t.Fatalf("renew from another store: %+v, %v", r, err)
	}
	if err := other.Release(tctx(t), foreign); err != nil {
		t.Fatalf("release from another store: %v", err)
	}
	if _, err := other.Holder(tctx(t), k); !errors.Is(err, leasehold.ErrNotHeld) {
		t.Errorf("after the release: %v, want ErrNotHeld", err)
	}
}

// testExternalUnlock: an entry unlocked behind the store's back (an
// operator's release) is refused at the next renewal, and the lease's
// context ends.
func testExternalUnlock(t *testing.T, c *testserver.Consul) {
	st := newStore(t, c, 0)
	cli := consulClient(t, c, 0)
	lc, err := leasehold.New(st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer lc.Close()
	l, err := lc.Acquire(tctx(t), uniqueKey(t, "k"), leasehold.AcquireOptions{TTL: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	kv := entry(t, cli, st, l.Key())
	if ok, _, err := cli.KV().Release(&api.KVPair{Key: kv.Key, Session: kv.Session}, nil); !ok || err != nil {
		t.Fatalf("external release: %v, %v", ok, err)
	}
	select {
	case <-l.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("lease still live 5 s after its entry was released behind it")
	}
	if err := l.Err(); !errors.Is(err, leasehold.ErrNotHeld) {
		t.Errorf("lease ended with %v, want ErrNotHeld", err)
	}
}
