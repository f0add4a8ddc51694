package storetest

import (
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/redis/internal/core"
)

// The acquire script writes the lease and the counter with the clock's
// token first and repairs them when the old counter was not below it (two
// grants in one microsecond, a clock stepped back): the lease's token, the
// counter and the grant must agree, at counter + 1.
func (e *Env) counterAheadRepaired(t *testing.T) {
	st := e.open(t)
	n := names(t)
	k := Key(t, "k")
	ahead := uint64(time.Now().UnixMicro()) + 3_600_000_000 // an hour ahead
	e.command(t, e.Server, "SET", n.Counter(k), strconv.FormatUint(ahead, 10))
	for i := uint64(1); i <= 3; i++ {
		g, err := st.Acquire(Ctx(t), Req(k, 30*time.Second))
		if err != nil {
			t.Fatalf("acquire: %v", err)
		}
		if g.Token != ahead+i {
			t.Fatalf("token %d, want the counter + 1 = %d", g.Token, ahead+i)
		}
		if c := e.command(t, e.Server, "GET", n.Counter(k)); c != strconv.FormatUint(g.Token, 10) {
			t.Fatalf("counter %s after the grant of token %d", c, g.Token)
		}
		if h, err := st.Holder(Ctx(t), k); err != nil || h.Token != g.Token || h.Label != "test" {
			t.Fatalf("Holder = %+v, %v; want the grant's token %d and label", h, err, g.Token)
		}
		if pttl := e.command(t, e.Server, "PTTL", n.Lock(k)); !strings.HasPrefix(pttl, ":") || pttl == ":-1" {
			t.Fatalf("PTTL of the repaired lease = %s, want its TTL", pttl)
		}
		if i < 3 {
			if err := st.Release(Ctx(t), g); err != nil {
				t.Fatal(err)
			}
		}
	}
	// A counter with leading zeros below the clock is a token: the clock wins.
	k = Key(t, "zeros")
	e.command(t, e.Server, "SET", n.Counter(k), "0000000000000042")
	g, err := st.Acquire(Ctx(t), Req(k, 30*time.Second))
	if err != nil || g.Token <= 42 {
		t.Fatalf("acquire over counter 0000000000000042: %+v, %v", g, err)
	}
	if c := e.command(t, e.Server, "GET", n.Counter(k)); c != strconv.FormatUint(g.Token, 10) {
		t.Fatalf("counter %s after the grant of token %d", c, g.Token)
	}
}

// An acquire that fails on a counter that is not a token leaves both keys
// as it found them: no lease, the counter untouched.
func (e *Env) badCounterUntouched(t *testing.T) {
	st := e.open(t)
	n := names(t)
	k := Key(t, "garbage")
	e.command(t, e.Server, "SET", n.Counter(k), "1e5")
	if _, err := st.Acquire(Ctx(t), Req(k, 30*time.Second)); !errors.Is(err, leasehold.ErrStore) || !strings.Contains(err.Error(), "token counter") {
		t.Fatalf("acquire over counter 1e5: %v, want a store error naming the counter", err)
	}
	if c := e.command(t, e.Server, "GET", n.Counter(k)); c != "1e5" {
		t.Errorf("counter %q after the failed acquire, want 1e5 untouched", c)
	}
	if x := e.command(t, e.Server, "EXISTS", n.Lock(k)); x != ":0" {
		t.Errorf("EXISTS lease = %s after the failed acquire, want :0", x)
	}
	k = Key(t, "wrongtype")
	e.command(t, e.Server, "HSET", n.Counter(k), "f", "v")
	if _, err := st.Acquire(Ctx(t), Req(k, 30*time.Second)); !errors.Is(err, leasehold.ErrStore) || !strings.Contains(err.Error(), "WRONGTYPE") {
		t.Fatalf("acquire over a counter of the wrong type: %v, want a store error with WRONGTYPE", err)
	}
	if x := e.command(t, e.Server, "EXISTS", n.Lock(k)); x != ":0" {
		t.Errorf("EXISTS lease = %s after the failed acquire, want :0", x)
	}
	if ty := e.command(t, e.Server, "TYPE", n.Counter(k)); ty != "+hash" {
		t.Errorf("TYPE counter = %s after the failed acquire, want +hash", ty)
	}
}

// Redlock's proposed token: refused when not above the counter, leaving
// neither a lease nor a changed counter; granted exactly when above it,
// with the counter and the lease at the proposal.
func (e *Env) proposedToken(t *testing.T) {
	n := names(t)
	k := Key(t, "k")
	lock, counter := n.Lock(k), n.Counter(k)
	e.command(t, e.Server, "SET", counter, "5000")
	eval := func(proposal string) string {
		return e.command(t, e.Server, "EVAL", core.AcquireScript.Src, "2", lock, counter, "1:o:", "lbl", "30000", proposal)
	}
	for _, p := range []string{"4999", "5000"} {
		if r := eval(p); r != "[:2 5000]" {
			t.Errorf("proposal %s over counter 5000: %s, want [:2 5000]", p, r)
		}
		if x := e.command(t, e.Server, "EXISTS", lock); x != ":0" {
			t.Errorf("proposal %s refused, yet EXISTS lease = %s", p, x)
		}
		if c := e.command(t, e.Server, "GET", counter); c != "5000" {
			t.Errorf("proposal %s refused, yet the counter is %s", p, c)
		}
	}
	if r := eval("5001"); r != "5001" {
		t.Fatalf("proposal 5001 over counter 5000: %s, want 5001", r)
	}
	if c := e.command(t, e.Server, "GET", counter); c != "5001" {
		t.Errorf("counter %s after granting 5001", c)
	}
	if v := e.command(t, e.Server, "GET", lock); v != "1:o:5001:lbl" {
		t.Errorf("lease %q after granting 5001", v)
	}
}
