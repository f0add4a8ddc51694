package serve

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/internal/wire"
	"github.com/leasehold-go/leasehold/memory"
)

// batching is a memory store that is also a leasehold.BatchRenewer, and
// counts its batches.
type batching struct {
	*memory.Store
	calls atomic.Int32
}

func (b *batching) RenewMany(ctx context.Context, gs []leasehold.Grant) ([]leasehold.RenewResult, error) {
	b.calls.Add(1)
	out := make([]leasehold.RenewResult, len(gs))
	for i, g := range gs {
		out[i].Grant, out[i].Err = b.Renew(ctx, g)
	}
	return out, nil
}

// TestRenewMany: one request renews several grants, each checked and
// authorized as a renew: a held grant renews (through its handle), a wrong
// token is not_held, a key outside the caller's token is forbidden, a bad
// TTL is invalid; the owner id is in no message; a backend that batches
// gets one call.
func TestRenewMany(t *testing.T) {
	_, path := authServer(t)
	tokens, err := LoadTokens(path)
	if err != nil {
		t.Fatal(err)
	}
	st := &batching{Store: memory.New(nil)}
	s := New(st, &Options{Tokens: tokens})
	t.Cleanup(func() { _ = s.Close(); _ = st.Close() })
	const owner = "owner-0123456789abcdef"
	acq := func(key string) wire.Grant {
		w := doAs(t, s, jobsToken, "POST", "/v1/acquire", jsonOf(t, wire.AcquireRequest{Key: key, Owner: owner, TTLMs: 60000}))
		var g wire.Grant
		if w.Code != 200 || json.Unmarshal(w.Body.Bytes(), &g) != nil {
			t.Fatalf("acquire %s: %d %s", key, w.Code, w.Body)
		}
		return g
	}
	a, b := acq("jobs/a"), acq("jobs/b")
	req := wire.RenewManyRequest{Grants: []wire.GrantRequest{
		{Key: a.Key, Owner: owner, Token: a.Token, TTLMs: 30000, Handle: a.Handle},
		{Key: b.Key, Owner: owner, Token: b.Token + 1, TTLMs: 30000},
		{Key: "billing/x", Owner: owner, Token: 1, TTLMs: 30000},
		{Key: b.Key, Owner: owner, Token: b.Token, TTLMs: 0, Handle: b.Handle},
	}}
	w := doAs(t, s, jobsToken, "POST", "/v1/renew-many", jsonOf(t, req))
	var resp wire.RenewManyResponse
	if w.Code != 200 || json.Unmarshal(w.Body.Bytes(), &resp) != nil || len(resp.Results) != 4 {
		t.Fatalf("renew-many: %d %s", w.Code, w.Body)
	}
	if g := resp.Results[0].Grant; g == nil || g.Token != a.Token || g.TTLMs != 30000 || g.Handle != a.Handle {
		t.Errorf("the held grant's result: %+v", resp.Results[0])
	}
	for i, want := range []struct {
		status int
		code   string
	}{{}, {404, wire.CodeNotHeld}, {403, wire.CodeForbidden}, {400, wire.CodeInvalidTTL}} {
		r := resp.Results[i]
		if i > 0 && (r.Grant != nil || r.Error == nil || r.Status != want.status || r.Error.Code != want.code) {
			t.Errorf("result %d: %+v, want %d %s", i, r, want.status, want.code)
		}
	}
	if strings.Contains(w.Body.String(), owner) && strings.Count(w.Body.String(), owner) != 1 {
		t.Errorf("the owner id is in a refusal: %s", w.Body)
	}
	if n := st.calls.Load(); n != 1 {
		t.Errorf("the backend got %d batches for one request, want 1", n)
	}
}

// TestRenewManyRefusals: the request as a whole is refused for no grants,
// too many, malformed JSON, and without a token.
func TestRenewManyRefusals(t *testing.T) {
	s, _ := authServer(t)
	many := wire.RenewManyRequest{Grants: make([]wire.GrantRequest, wire.MaxBatch+1)}
	for _, tc := range []struct {
		token, body string
		status      int
		says        string
	}{
		{jobsToken, `{"grants":[]}`, 400, "send 1 to 32 grants, not 0"},
		{jobsToken, jsonOf(t, many), 400, "not 33"},
		{jobsToken, `{"grants":[{"key":"jobs/a","token":"1"}],"x":1}`, 400, `unknown field "x"`},
		{jobsToken, `{"grants":[{"key":"jobs/a","token":"1"}`, 400, "malformed JSON"},
		{"", `{"grants":[{"key":"jobs/a","owner":"o-owner-0123456789","token":"1"}]}`, 401, "bearer token"},
	} {
		w := doAs(t, s, tc.token, "POST", "/v1/renew-many", tc.body)
		if e := errorOf(t, w); w.Code != tc.status || !strings.Contains(e.Message, tc.says) {
			t.Errorf("renew-many %s: %d %+v, want %d saying %q", tc.body, w.Code, e, tc.status, tc.says)
		}
	}
}

// queueing is a memory store that is a leasehold.Waiter whose turn never
// comes: AcquireWait ends with its context.
type queueing struct{ *memory.Store }

func (queueing) AcquireWait(ctx context.Context, _ leasehold.AcquireRequest) (leasehold.Grant, error) {
	<-ctx.Done()
	return leasehold.Grant{}, ctx.Err()
}

// TestQueue: queue is refused (501) on a backend without a queue, offered
// in info on one with; a queued wait that runs out answers held, with the
// holder.
func TestQueue(t *testing.T) {
	s, _ := newServer(t)
	w := do(t, s, "POST", "/v1/acquire", `{"key":"k","owner":"o1-owner-0123456789","ttl_ms":1000,"queue":true}`)
	if e := errorOf(t, w); w.Code != 501 || e.Code != wire.CodeNotImplemented || !strings.Contains(e.Message, "no queue") {
		t.Errorf("queue on memory: %d %+v", w.Code, e)
	}
	st := queueing{memory.New(nil)}
	q := New(st, nil)
	t.Cleanup(func() { _ = q.Close(); _ = st.Close() })
	if !q.capabilities().Queue {
		t.Errorf("a Waiter backend's capabilities: %+v", q.capabilities())
	}
	held := acquire(t, q, "k", "holder-0123456789")
	w = do(t, q, "POST", "/v1/acquire", `{"key":"k","owner":"o2-owner-0123456789","ttl_ms":1000,"queue":true,"wait_ms":20}`)
	if e := errorOf(t, w); w.Code != 409 || e.Holder == nil || e.Holder.Token != held.Token || e.Holder.Label != "test" {
		t.Errorf("a queued wait that ran out: %d %+v", w.Code, e)
	}
}

// leaving is a memory store whose Acquire grants after the client's
// request has ended (leave cancels it), as a client that gives up just as
// its wait is answered does.
type leaving struct {
	*memory.Store
	leave context.CancelFunc
}

func (l leaving) Acquire(ctx context.Context, req leasehold.AcquireRequest) (leasehold.Grant, error) {
	l.leave()
	return l.Store.Acquire(context.WithoutCancel(ctx), req)
}

// TestAcquireAfterClientLeft: a grant made after the client went away is
// released at once, not left held until its TTL ends.
func TestAcquireAfterClientLeft(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	st := leaving{memory.New(nil), cancel}
	s := New(st, nil)
	t.Cleanup(func() { _ = s.Close(); _ = st.Close() })
	r := httptest.NewRequestWithContext(ctx, "POST", "/v1/acquire", strings.NewReader(`{"key":"k","owner":"o1-owner-0123456789","ttl_ms":60000}`))
	w := httptest.NewRecorder()
	s.ServeHTTP(w, r)
	if _, err := st.Holder(context.Background(), "k"); err == nil || w.Code == http.StatusOK {
		t.Errorf("after the client left: answer %d, holder err %v; want the grant released", w.Code, err)
	}
}
