package consul_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/consul/api"

	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/consul"
	"github.com/leasehold-go/leasehold/internal/testserver"
)

// tokenIn returns the token stored in a held entry's value.
func tokenIn(t testing.TB, kv *api.KVPair) uint64 {
	t.Helper()
	var v struct {
		Token uint64 `json:"token"`
	}
	if err := json.Unmarshal(kv.Value, &v); err != nil || v.Token == 0 {
		t.Fatalf("entry %s: value %q has no token (%v)", kv.Key, kv.Value, err)
	}
	return v.Token
}

// restartEmpty kills agent i and starts it again: a dev agent comes back
// without any of its state (entries, sessions, Raft log).
func restartEmpty(t testing.TB, c *testserver.Consul, i int) {
	t.Helper()
	c.Kill(i)
	if err := c.Restart(i); err != nil {
		t.Fatalf("restart %s: %v", c.Agents[i].Name, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := c.WaitServing(ctx); err != nil {
		t.Fatalf("after restart: %v\n%s", err, c.Logs())
	}
}

// agentSecondAfter waits until the agent's clock (its Date header, whole
// seconds) is past the second of the token us (µs since 1970).
func agentSecondAfter(t testing.TB, addr string, us uint64) {
	t.Helper()
	eventually(t, 30*time.Second, "agent's clock past the first grant's second", func() bool {
		resp, err := http.Get("http://" + addr + "/v1/status/leader")
		if err != nil {
			return false
		}
		resp.Body.Close()
		d, err := http.ParseTime(resp.Header.Get("Date"))
		return err == nil && uint64(d.Unix()) > us/1e6
	})
}

// TestTokensAfterDataLoss: a dev agent restarted between two grants loses
// every entry and starts its Raft index again near zero; the next grant's
// token is still greater than every token before, from the store that
// granted them (its highest token) and from a new store (the agent's
// clock, once it is past the second of the last grant); and a grant of
// another key after a token planted ahead of the clock is above that token
// (the store's high-water mark, which the first case does not need).
func TestTokensAfterDataLoss(t *testing.T) {
	c := testserver.NewConsul(t, testserver.ConsulOptions{})
	st := newStore(t, c, 0)
	k := uniqueKey(t, "k")
	var last uint64
	for range 3 {
		g, err := st.Acquire(tctx(t), areq(k, time.Second))
		if err != nil {
			t.Fatal(err)
		}
		if g.Token <= last {
			t.Fatalf("token %d after %d", g.Token, last)
		}
		last = g.Token
		if err := st.Release(tctx(t), g); err != nil {
			t.Fatal(err)
		}
	}
	restartEmpty(t, c, 0)
	if kv, _, err := consulClient(t, c, 0).KV().Get(st.KeyOf(k), nil); err != nil || kv != nil {
		t.Fatalf("after the restart the entry is %+v, %v; want it gone", kv, err)
	}
	g, err := st.Acquire(tctx(t), areq(k, time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if g.Token <= last {
		t.Fatalf("same store after the agent lost its data: token %d, not above %d", g.Token, last)
	}
	last = g.Token
	_ = st.Release(tctx(t), g)

	restartEmpty(t, c, 0)
	agentSecondAfter(t, c.Agents[0].Addr(), last)
	other := newStore(t, c, 0)
	g, err = other.Acquire(tctx(t), areq(k, time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if g.Token <= last {
		t.Fatalf("new store after the agent lost its data: token %d, not above %d", g.Token, last)
	}
	_ = other.Release(tctx(t), g)

	// The same-store case above passes on the clock floor alone (the
	// agent's clock moves on past the old tokens). This one needs the
	// store's high-water mark: a token planted ten minutes ahead of the
	// clock (within the hour of slack that lets a seen token raise the
	// mark) on key j gives its grant a token above the clock; after the
	// loss, a grant of key k, whose entry is gone and whose clock floor is
	// ten minutes lower, must still be above it.
	j := uniqueKey(t, "j")
	ahead := uint64(time.Now().Add(10 * time.Minute).UnixMicro())
	if _, err := consulClient(t, c, 0).KV().Put(&api.KVPair{Key: st.KeyOf(j), Value: ourValue(ahead), Flags: consul.Flags}, nil); err != nil {
		t.Fatal(err)
	}
	gj, err := st.Acquire(tctx(t), areq(j, time.Second))
	if err != nil || gj.Token != ahead+1 {
		t.Fatalf("acquire over a token planted ahead of the clock: token %d, %v; want %d", gj.Token, err, ahead+1)
	}
	_ = st.Release(tctx(t), gj)
	restartEmpty(t, c, 0)
	g, err = st.Acquire(tctx(t), areq(k, time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if g.Token <= gj.Token {
		t.Fatalf("same store after the loss, another key: token %d, not above the store's highest %d", g.Token, gj.Token)
	}
	_ = st.Release(tctx(t), g)
}

// TestDevAgentRestartEndsLeases: OpenURL finds a -dev agent (SafeTokens
// false, the caveat says what a restart allows); when the agent restarts,
// every lease of the store, in every TTL class, ends with a cause naming
// the data loss, and the keys can be acquired again.
func TestDevAgentRestartEndsLeases(t *testing.T) {
	c := testserver.NewConsul(t, testserver.ConsulOptions{})
	st := newStore(t, c, 0)
	if info := st.Info(); info.SafeTokens || !strings.Contains(info.TokenCaveat, "-dev agent") {
		t.Fatalf("Info on a dev agent: %+v; want SafeTokens false and a caveat naming the -dev agent", info)
	}
	lc, err := leasehold.New(st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer lc.Close()
	var leases []*leasehold.Lease
	for i, ttl := range []time.Duration{time.Second, 3 * time.Second} {
		l, err := lc.Acquire(tctx(t), uniqueKey(t, fmt.Sprint(i)), leasehold.AcquireOptions{TTL: ttl})
		if err != nil {
			t.Fatal(err)
		}
		leases = append(leases, l)
	}
	restartEmpty(t, c, 0)
	for _, l := range leases {
		select {
		case <-l.Context().Done():
		case <-tctx(t).Done():
			t.Fatalf("lease on %q still held after the dev agent restarted", l.Key())
		}
		cause := context.Cause(l.Context())
		if !errors.Is(cause, leasehold.ErrNotHeld) || !strings.Contains(cause.Error(), "lost its data") {
			t.Errorf("lease on %q ended with %v; want ErrNotHeld naming the data loss", l.Key(), cause)
		}
		t.Logf("%s: %v", l.Key(), cause)
		// The lease's own grant (its real owner, token and session): a
		// renewal that succeeded would mean the loss went unnoticed.
		if _, err := st.Renew(tctx(t), l.Grant()); !errors.Is(err, leasehold.ErrNotHeld) || !errors.Is(err, consul.ErrDataLost) {
			t.Errorf("renew of the lease's grant after the loss: %v; want ErrNotHeld and ErrDataLost", err)
		}
	}
	for _, l := range leases {
		l2, err := lc.Acquire(tctx(t), l.Key(), leasehold.AcquireOptions{TTL: time.Second})
		if err != nil {
			t.Fatalf("acquire %q after the restart: %v", l.Key(), err)
		}
		if l2.Token() <= l.Token() {
			t.Errorf("token %d after %d", l2.Token(), l.Token())
		}
		_ = l2.Release(tctx(t))
	}
}
