package remote_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"syscall"
	"testing"

	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/internal/servetest"
	"github.com/leasehold-go/leasehold/memory"
	"github.com/leasehold-go/leasehold/remote"
	"github.com/leasehold-go/leasehold/serve"
)

// openServers opens a remote store on the servers, in that order.
func openServers(t *testing.T, first *servetest.Server, others ...*servetest.Server) leasehold.Store {
	t.Helper()
	var urls []string
	for _, o := range others {
		urls = append(urls, o.URL)
	}
	st, err := remote.Open(context.Background(), first.URL, &remote.Options{Servers: urls})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	return st
}

// closedMemory is a memory store already closed: every operation fails
// with a store error, which a server answers with 503.
func closedMemory() *memory.Store {
	m := memory.New(nil)
	_ = m.Close()
	return m
}

// TestServersNoFailoverOn4xx: the first server's 404 (k is not held in its
// store) is the answer, though the second server's store holds k.
func TestServersNoFailoverOn4xx(t *testing.T) {
	other := memory.New(nil)
	defer other.Close()
	if _, err := other.Acquire(context.Background(), acquireReq("k")); err != nil {
		t.Fatal(err)
	}
	st := openServers(t, servetest.Start(t, memory.New(nil)), servetest.Start(t, other))
	if h, err := st.Holder(context.Background(), "k"); !errors.Is(err, leasehold.ErrNotHeld) {
		t.Errorf("holder: %+v, %v; want the first server's ErrNotHeld", h, err)
	}
}

// TestServersFailoverOn503: a read the first server answers with 503 (its
// store fails) is asked of the second; an acquire it answers with 503 is
// not sent again (its outcome is the first server's store's), and the next
// acquire goes to the second server.
func TestServersFailoverOn503(t *testing.T) {
	ctx := context.Background()
	second := memory.New(nil)
	defer second.Close()
	if _, err := second.Acquire(ctx, acquireReq("held")); err != nil {
		t.Fatal(err)
	}
	broken, working := servetest.Start(t, closedMemory()), servetest.Start(t, second)
	if h, err := openServers(t, broken, working).Holder(ctx, "held"); err != nil || h.Token != 1 {
		t.Errorf("holder through a failing server and a working one: %+v, %v; want the second's holder", h, err)
	}
	st := openServers(t, broken, working)
	var se *remote.ServerError
	if _, err := st.Acquire(ctx, acquireReq("k")); !errors.As(err, &se) || se.Status != 503 {
		t.Fatalf("acquire through a failing server: %v, want its 503", err)
	}
	if h, err := second.Holder(ctx, "k"); !errors.Is(err, leasehold.ErrNotHeld) {
		t.Fatalf("the acquire answered 503 was sent to the second server too: %+v, %v", h, err)
	}
	req := acquireReq("k")
	req.Owner = "fedcba9876543210fedcba9876543210" // a new attempt, a new owner id
	if _, err := st.Acquire(ctx, req); err != nil {
		t.Fatalf("the next acquire: %v, want it granted by the second server", err)
	}
	if h, err := second.Holder(ctx, "k"); err != nil || h.Token != 1 {
		t.Errorf("the second server's store after the next acquire: %+v, %v", h, err)
	}
}

// TestServersKeptGrantPinned: a grant the first server keeps under a
// handle renews through that server only: once it is gone, the renewal
// fails to connect (it is not sent to the second server, which would
// rebuild nothing), while a new acquire goes to the second server.
func TestServersKeptGrantPinned(t *testing.T) {
	ctx := context.Background()
	shared := memory.New(nil)
	defer shared.Close()
	first, second := servetest.Start(t, shared), servetest.Start(t, shared)
	st := openServers(t, first, second)
	g, err := st.Acquire(ctx, acquireReq("k"))
	if err != nil || g.Private == nil {
		t.Fatalf("acquire: %+v, %v; want a kept grant", g, err)
	}
	if _, err := st.Renew(ctx, g); err != nil {
		t.Fatalf("renew through the first server: %v", err)
	}
	first.Kill()
	if _, err := st.Renew(ctx, g); !errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, leasehold.ErrNotHeld) {
		t.Errorf("renew of the first server's grant once it is gone: %v, want its connection refused", err)
	}
	if _, err := st.Acquire(ctx, acquireReq("k2")); err != nil {
		t.Errorf("acquire with the first server gone: %v, want it granted by the second", err)
	}
}

// TestServersAcquireFailsOverWhenNotSent: an acquire whose connection
// cannot be made (the first server is gone; no connection kept alive) is
// sent to the second server.
func TestServersAcquireFailsOverWhenNotSent(t *testing.T) {
	shared := memory.New(nil)
	defer shared.Close()
	first, second := servetest.Start(t, shared), servetest.Start(t, shared)
	hc := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	st, err := remote.Open(context.Background(), first.URL, &remote.Options{HTTPClient: hc, Servers: []string{second.URL}})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	first.Kill()
	if g, err := st.Acquire(context.Background(), acquireReq("k")); err != nil || g.Token != 1 {
		t.Errorf("acquire with the first server gone: %+v, %v; want it granted by the second", g, err)
	}
}

// TestServersAcquireOutcomeUnknownNotResent: an acquire whose connection
// breaks after it was sent (the first server read it and hung up) is not
// sent to the second server: its error is returned; the next acquire goes
// to the second server.
func TestServersAcquireOutcomeUnknownNotResent(t *testing.T) {
	ctx := context.Background()
	shared := memory.New(nil)
	defer shared.Close()
	real := serve.New(shared, nil)
	defer real.Close()
	hangUp := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/acquire" {
			real.ServeHTTP(w, r)
			return
		}
		_, _ = io.ReadAll(r.Body)
		conn, _, err := http.NewResponseController(w).Hijack()
		if err == nil {
			conn.Close()
		}
	}))
	defer hangUp.Close()
	second := servetest.Start(t, shared)
	st, err := remote.Open(ctx, hangUp.URL, &remote.Options{Servers: []string{second.URL}})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if g, err := st.Acquire(ctx, acquireReq("k")); err == nil || errors.Is(err, leasehold.ErrHeld) {
		t.Fatalf("acquire through a server that hung up: %+v, %v; want its error", g, err)
	}
	if h, err := shared.Holder(ctx, "k"); !errors.Is(err, leasehold.ErrNotHeld) {
		t.Fatalf("the acquire of unknown outcome was sent again: k is held by %+v (%v)", h, err)
	}
	req := acquireReq("k")
	req.Owner = "fedcba9876543210fedcba9876543210"
	if g, err := st.Acquire(ctx, req); err != nil || g.Token != 1 {
		t.Errorf("the next acquire: %+v, %v; want it granted by the second server", g, err)
	}
}
