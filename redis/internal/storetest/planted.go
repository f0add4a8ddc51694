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

// exhaustedCounters are counters an adversary plants that leave no token
// to grant: 2^64-1, the largest token of the scripts (2^53-1) and above.
var exhaustedCounters = []string{
	"18446744073709551615", "9007199254740991", "9007199254740992",
	"99999999999999999", "000009007199254740991", "184467440737095516150",
}

// wantRefusal checks that err is a *leasehold.StoreError wrapping target
// and naming object.
func wantRefusal(t *testing.T, what string, err, target error, object string) {
	t.Helper()
	var se *leasehold.StoreError
	if !errors.As(err, &se) || !errors.Is(err, target) || !strings.Contains(err.Error(), object) {
		t.Errorf("%s: got %v, want a *StoreError wrapping %v naming %s", what, err, target, object)
	}
}

// A counter at the largest token or above refuses the grant with
// ErrTokensExhausted, leaving no lease and the counter as it was; the
// counter just below it grants the largest token once, then refuses.
func (e *Env) tokensExhausted(t *testing.T) {
	st := e.open(t)
	n := names(t)
	for _, v := range exhaustedCounters {
		k := Key(t, "k")
		e.command(t, e.Server, "SET", n.Counter(k), v)
		g, err := st.Acquire(Ctx(t), Req(k, 30*time.Second))
		if err == nil {
			t.Errorf("counter %s: granted token %d", v, g.Token)
			continue
		}
		wantRefusal(t, "counter "+v, err, leasehold.ErrTokensExhausted, n.Counter(k))
		if x := e.command(t, e.Server, "EXISTS", n.Lock(k)); x != ":0" {
			t.Errorf("counter %s: EXISTS lease = %s after the refusal, want :0", v, x)
		}
		if c := e.command(t, e.Server, "GET", n.Counter(k)); c != v {
			t.Errorf("counter %s: %s after the refusal, want it untouched", v, c)
		}
	}
	k := Key(t, "last")
	e.command(t, e.Server, "SET", n.Counter(k), strconv.FormatUint(core.MaxToken-1, 10))
	g, err := st.Acquire(Ctx(t), Req(k, 30*time.Second))
	if err != nil || g.Token != core.MaxToken {
		t.Fatalf("counter MaxToken-1: %+v, %v; want the grant of MaxToken", g, err)
	}
	if err := st.Release(Ctx(t), g); err != nil {
		t.Fatal(err)
	}
	g, err = st.Acquire(Ctx(t), Req(k, 30*time.Second))
	if err == nil {
		t.Fatalf("counter MaxToken: granted token %d", g.Token)
	}
	wantRefusal(t, "counter MaxToken", err, leasehold.ErrTokensExhausted, n.Counter(k))
	if _, err := st.Holder(Ctx(t), k); !errors.Is(err, leasehold.ErrNotHeld) {
		t.Errorf("Holder after the refusal: %v, want ErrNotHeld", err)
	}
}

// Planted values are refused as foreign records naming their key: a
// counter that is not a number, and leases of leasehold's shape but with a
// token out of range, no TTL, or a TTL longer than any lease's (the old
// code reported these as held, one of them forever).
func (e *Env) plantedValues(t *testing.T) {
	st := e.open(t)
	n := names(t)
	for _, v := range []string{"abc", "-5", "1e5", " 7", ""} {
		k := Key(t, "counter")
		e.command(t, e.Server, "SET", n.Counter(k), v)
		_, err := st.Acquire(Ctx(t), Req(k, 30*time.Second))
		wantRefusal(t, "counter "+strconv.Quote(v), err, leasehold.ErrForeignRecord, n.Counter(k))
		if x := e.command(t, e.Server, "EXISTS", n.Lock(k)); x != ":0" {
			t.Errorf("counter %q: EXISTS lease = %s after the refusal, want :0", v, x)
		}
	}
	for _, c := range []struct{ name, value, px string }{
		{"token_2^64-1", "1:o:18446744073709551615:l", "30000"},
		{"token_above_2^53", "1:o:9007199254740992:l", "30000"},
		{"token_negative", "1:o:-1:l", "30000"},
		{"no_ttl", "1:o:5:l", ""},
		{"ttl_of_a_year", "1:o:5:l", strconv.FormatInt(365*24*3600*1000, 10)},
	} {
		k := Key(t, c.name)
		args := []string{"SET", n.Lock(k), c.value}
		if c.px != "" {
			args = append(args, "PX", c.px)
		}
		e.command(t, e.Server, args...)
		_, err := st.Acquire(Ctx(t), Req(k, 30*time.Second))
		wantRefusal(t, "acquire over lease "+c.name, err, leasehold.ErrForeignRecord, n.Lock(k))
		var fe *leasehold.ForeignRecordError
		if !errors.As(err, &fe) || fe.Object != n.Lock(k) || fe.Reason == "" {
			t.Errorf("lease %s: %v, want a *ForeignRecordError naming %s", c.name, err, n.Lock(k))
		}
		_, err = st.Holder(Ctx(t), k)
		wantRefusal(t, "holder of lease "+c.name, err, leasehold.ErrForeignRecord, n.Lock(k))
		if !errors.Is(err, core.ErrForeignValue) {
			t.Errorf("lease %s: %v does not match core.ErrForeignValue", c.name, err)
		}
	}
}

// Every master's counter at 2^64-1: the acquire fails with
// ErrTokensExhausted and no master holds a lease.
func (e *RedlockEnv) tokensExhausted(t *testing.T) {
	st := e.open(t)
	n := names(t)
	k := Key(t, "k")
	for _, m := range e.Masters {
		if _, err := m.Command(Ctx(t), "SET", n.Counter(k), "18446744073709551615"); err != nil {
			t.Fatal(err)
		}
	}
	g, err := st.Acquire(Ctx(t), Req(k, 30*time.Second))
	if err == nil {
		t.Fatalf("granted token %d over counters at 2^64-1", g.Token)
	}
	wantRefusal(t, "redlock counters 2^64-1", err, leasehold.ErrTokensExhausted, n.Counter(k))
	for _, m := range e.Masters {
		if x, err := m.Command(Ctx(t), "EXISTS", n.Lock(k)); err != nil || x != ":0" {
			t.Errorf("master %s: EXISTS lease = %s, %v after the refusal, want :0", m.Addr(), x, err)
		}
	}
	if _, err := st.Holder(Ctx(t), k); !errors.Is(err, leasehold.ErrNotHeld) {
		t.Errorf("Holder after the refusal: %v, want ErrNotHeld", err)
	}
}

// A lease without a TTL planted on every master (the old code reported it
// held, for ever) is refused as a foreign record naming the lease key.
func (e *RedlockEnv) plantedLease(t *testing.T) {
	st := e.open(t)
	n := names(t)
	k := Key(t, "k")
	for _, m := range e.Masters {
		if _, err := m.Command(Ctx(t), "SET", n.Lock(k), "1:o:5:l"); err != nil {
			t.Fatal(err)
		}
	}
	_, err := st.Acquire(Ctx(t), Req(k, 30*time.Second))
	wantRefusal(t, "redlock acquire over a lease without TTL", err, leasehold.ErrForeignRecord, n.Lock(k))
	_, err = st.Holder(Ctx(t), k)
	wantRefusal(t, "redlock holder of a lease without TTL", err, leasehold.ErrForeignRecord, n.Lock(k))
}
