package leasehold_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/fence"
	"github.com/leasehold-go/leasehold/memory"
)

// recorder keeps the events it observes.
type recorder struct {
	mu     sync.Mutex
	events []leasehold.Event
}

func (r *recorder) Observe(e leasehold.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, e)
}

func (r *recorder) kinds() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var ks []string
	for _, e := range r.events {
		ks = append(ks, e.Kind.String())
	}
	return ks
}

func (r *recorder) find(k leasehold.EventKind) (leasehold.Event, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, e := range r.events {
		if e.Kind == k {
			return e, true
		}
	}
	return leasehold.Event{}, false
}

// refusingRenewals is a memory store that refuses every renewal: the
// holder's lease is lost at the first one.
type refusingRenewals struct{ *memory.Store }

func (refusingRenewals) Renew(context.Context, leasehold.Grant) (leasehold.Grant, error) {
	return leasehold.Grant{}, leasehold.ErrNotHeld
}

func TestObserverSeesTheLifecycle(t *testing.T) {
	rec := &recorder{}
	st := memory.New(nil)
	c, err := leasehold.New(st, &leasehold.Options{Observer: rec, TTL: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	l, err := c.Acquire(t.Context(), "k", leasehold.AcquireOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// A waiting acquire that gives up: attempts and wait are counted.
	if _, err := c.Acquire(t.Context(), "k", leasehold.AcquireOptions{Wait: 50 * time.Millisecond}); !errors.Is(err, leasehold.ErrHeld) {
		t.Fatalf("second acquire: %v", err)
	}
	// Renewals at about a third of the TTL.
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if _, ok := rec.find(leasehold.EventRenew); ok {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no renew event; events %v", rec.kinds())
		}
	}
	if err := l.Release(t.Context()); err != nil {
		t.Fatal(err)
	}
	got := rec.kinds()
	if got[0] != "acquire" || got[1] != "acquire" || got[len(got)-1] != "release" {
		t.Fatalf("events %v", got)
	}
	rec.mu.Lock()
	first, second := rec.events[0], rec.events[1]
	rec.mu.Unlock()
	if first.Err != nil || first.Token != l.Token() || first.Attempts != 1 || first.Key != "k" {
		t.Errorf("granted acquire event %+v", first)
	}
	if !errors.Is(second.Err, leasehold.ErrHeld) || second.Attempts < 2 || second.Wait < 50*time.Millisecond || second.Token != 0 {
		t.Errorf("held acquire event %+v: want ErrHeld, several attempts, the wait", second)
	}
	if r, _ := rec.find(leasehold.EventRenew); r.Err != nil || r.Token != l.Token() {
		t.Errorf("renew event %+v", r)
	}
	if r, _ := rec.find(leasehold.EventRelease); r.Err != nil || r.Held <= 0 {
		t.Errorf("release event %+v", r)
	}

	// A refused renewal: a renew event with the refusal, then the loss.
	rec2 := &recorder{}
	c2, _ := leasehold.New(refusingRenewals{memory.New(nil)}, &leasehold.Options{Observer: rec2, TTL: 300 * time.Millisecond})
	defer c2.Close()
	l2, err := c2.Acquire(t.Context(), "k", leasehold.AcquireOptions{})
	if err != nil {
		t.Fatal(err)
	}
	<-l2.Done()
	lost, ok := rec2.find(leasehold.EventLost)
	if !ok || !errors.Is(lost.Err, leasehold.ErrNotHeld) || lost.Held <= 0 {
		t.Fatalf("lost event %+v (found %v); events %v", lost, ok, rec2.kinds())
	}
	if r, _ := rec2.find(leasehold.EventRenew); !errors.Is(r.Err, leasehold.ErrNotHeld) {
		t.Fatalf("renew event %+v, want the refusal", r)
	}
}

func TestSlogObserverLevels(t *testing.T) {
	var buf bytes.Buffer
	o := leasehold.SlogObserver(slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug})))
	for _, e := range []leasehold.Event{
		{Kind: leasehold.EventAcquire, Key: "k", Token: 7, Wait: time.Millisecond, Attempts: 1},
		{Kind: leasehold.EventAcquire, Key: "k", Err: &leasehold.StoreError{Store: "redis", Op: "acquire", Err: errors.New("down")}},
		{Kind: leasehold.EventRenew, Key: "k", Token: 7, Err: errors.New("timeout"), Remaining: time.Second},
		{Kind: leasehold.EventLost, Key: "k", Token: 7, Err: &leasehold.LostError{Key: "k", Token: 7, Reason: leasehold.ErrExpired}},
		{Kind: leasehold.EventRelease, Key: "k", Token: 7, Held: time.Second, Latency: time.Millisecond},
		{Kind: leasehold.EventFenceReject, Key: "k", Token: 3, Err: &fence.StaleError{Resource: "k", Token: 3, Highest: 7}},
	} {
		o.Observe(e)
	}
	var levels []string
	for _, line := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatal(err)
		}
		if m["key"] != "k" || m["op"] == nil {
			t.Errorf("line without key or op: %s", line)
		}
		levels = append(levels, m["level"].(string))
	}
	want := []string{"DEBUG", "WARN", "WARN", "ERROR", "DEBUG", "WARN"}
	if strings.Join(levels, " ") != strings.Join(want, " ") {
		t.Fatalf("levels %v, want %v\n%s", levels, want, buf.String())
	}
}

// TestFenceRejectionsReachTheObserver: a stale request refused by
// fence.Middleware is reported as an EventFenceReject with the refused
// token; admitted requests are not reported.
func TestFenceRejectionsReachTheObserver(t *testing.T) {
	var rec recorder
	h := fence.MiddlewareOptions{OnStale: leasehold.FenceRejections(&rec)}.Wrap(new(fence.MemoryGuard),
		http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	for _, tok := range []string{"5", "7", "6", "7"} {
		req := httptest.NewRequest("PUT", "/doc", nil)
		req.Header.Set(fence.Header, tok)
		h.ServeHTTP(httptest.NewRecorder(), req)
	}
	if got := rec.kinds(); strings.Join(got, " ") != "fence_reject" {
		t.Fatalf("events %v, want one fence_reject", got)
	}
	e, _ := rec.find(leasehold.EventFenceReject)
	if e.Key != "/doc" || e.Token != 6 || !errors.Is(e.Err, fence.ErrStale) {
		t.Fatalf("event %+v, want key /doc, token 6, a stale error", e)
	}
}

// portable is a memory store that claims portable grants, so that Claim
// accepts it.
type portable struct{ *memory.Store }

func (p portable) Info() leasehold.Info {
	i := p.Store.Info()
	i.PortableGrants = true
	return i
}

// portableClient is a client of a portable memory store, observed by rec.
func portableClient(t *testing.T, rec *recorder) *leasehold.Client {
	t.Helper()
	c, err := leasehold.New(portable{memory.New(nil)}, &leasehold.Options{Observer: rec})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func TestObserverTellsClaimsFromLeases(t *testing.T) {
	rec := &recorder{}
	c := portableClient(t, rec)
	g, err := c.Claim(t.Context(), "claimed", leasehold.AcquireOptions{})
	if err != nil {
		t.Fatal(err)
	}
	l, err := c.Acquire(t.Context(), "leased", leasehold.AcquireOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rec.mu.Lock()
	claim, acquire := rec.events[0], rec.events[1]
	rec.mu.Unlock()
	if !claim.Claimed || claim.Token != g.Token || claim.Key != "claimed" {
		t.Errorf("Claim's event %+v: want Claimed with the grant's token", claim)
	}
	if acquire.Claimed || acquire.Token != l.Token() {
		t.Errorf("Acquire's event %+v: want not Claimed", acquire)
	}
}
