package storetest

import (
	"context"
	"errors"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/leasehold-go/leasehold"
	lhredis "github.com/leasehold-go/leasehold/redis"
)

// CountingClient counts script calls: round trips, for the tests and the
// benchmarks.
type CountingClient struct {
	lhredis.Client
	Calls atomic.Int64
}

// EvalSha counts and forwards.
func (c *CountingClient) EvalSha(ctx context.Context, sha string, keys, args []string) (any, error) {
	c.Calls.Add(1)
	return c.Client.EvalSha(ctx, sha, keys, args)
}

// Eval counts and forwards.
func (c *CountingClient) Eval(ctx context.Context, s string, keys, args []string) (any, error) {
	c.Calls.Add(1)
	return c.Client.Eval(ctx, s, keys, args)
}

// RenewMany renews 2,500 leases in three script calls (1,000 per call),
// reports per grant, and never renews a grant that is not the caller's.
func (e *Env) renewMany(t *testing.T) {
	cc := &CountingClient{Client: e.NewClient(t, e.Server.Addr())}
	st, err := lhredis.New(cc, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	const n = 2500
	gs := make([]leasehold.Grant, n)
	for i := range gs {
		if gs[i], err = st.Acquire(Ctx(t), Req(Key(t, strconv.Itoa(i)), 5*time.Second)); err != nil {
			t.Fatal(err)
		}
	}
	// Grant 7 is released, grant 8 carries a stale token, grant 9 a bad TTL.
	if err := st.Release(Ctx(t), gs[7]); err != nil {
		t.Fatal(err)
	}
	gs[8].Token--
	for i := range gs {
		gs[i].TTL = 60 * time.Second
	}
	gs[9].TTL = 0
	// Warm the script cache: the first call of a script after a restart
	// or SCRIPT FLUSH is a NOSCRIPT answer and an EVAL.
	if _, err := st.RenewMany(Ctx(t), gs[:1]); err != nil {
		t.Fatal(err)
	}
	cc.Calls.Store(0)
	res, err := st.RenewMany(Ctx(t), gs)
	if err != nil {
		t.Fatalf("RenewMany: %v", err)
	}
	if got := cc.Calls.Load(); got != 3 {
		t.Errorf("RenewMany of %d grants made %d script calls, want 3", n, got)
	}
	for i, r := range res {
		switch i {
		case 7, 8:
			if !errors.Is(r.Err, leasehold.ErrNotHeld) {
				t.Errorf("grant %d: %v, want ErrNotHeld", i, r.Err)
			}
		case 9:
			if !errors.Is(r.Err, leasehold.ErrInvalidTTL) {
				t.Errorf("grant %d: %v, want ErrInvalidTTL", i, r.Err)
			}
		default:
			if r.Err != nil || r.Grant.Token != gs[i].Token || r.Grant.TTL != 60*time.Second {
				t.Fatalf("grant %d: %+v", i, r)
			}
		}
	}
	if h, err := st.Holder(Ctx(t), gs[0].Key); err != nil || h.Remaining <= 5*time.Second {
		t.Errorf("after RenewMany to 60s, Holder = %+v, %v", h, err)
	}
	if h, err := st.Holder(Ctx(t), gs[8].Key); err != nil || h.Remaining > 5*time.Second {
		t.Errorf("the stale grant's lease was renewed: %+v, %v", h, err)
	}
}
