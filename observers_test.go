package leasehold_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/fence"
	"github.com/leasehold-go/leasehold/memory"
)

// named is an observer that appends its name to a shared log.
type named struct {
	name string
	log  *[]string
}

func (n *named) Observe(leasehold.Event) { *n.log = append(*n.log, n.name) }

func TestObservers(t *testing.T) {
	var log []string
	a, b, c := &named{"a", &log}, &named{"b", &log}, &named{"c", &log}
	for _, tc := range []struct {
		name string
		obs  []leasehold.Observer
		want []string // the observers called, in order; nil: Observers returns nil
		self leasehold.Observer
	}{
		{name: "none"},
		{name: "only nils", obs: []leasehold.Observer{nil, nil}},
		{name: "one returns itself", obs: []leasehold.Observer{a}, want: []string{"a"}, self: a},
		{name: "one among nils returns itself", obs: []leasehold.Observer{nil, b, nil}, want: []string{"b"}, self: b},
		{name: "two in order", obs: []leasehold.Observer{a, b}, want: []string{"a", "b"}},
		{name: "nils skipped", obs: []leasehold.Observer{nil, c, nil, a}, want: []string{"c", "a"}},
		{name: "the same twice is called twice", obs: []leasehold.Observer{a, a}, want: []string{"a", "a"}},
		{name: "nested flattened", obs: []leasehold.Observer{leasehold.Observers(a, b), c}, want: []string{"a", "b", "c"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			log = nil
			o := leasehold.Observers(tc.obs...)
			if tc.want == nil {
				if o != nil {
					t.Fatalf("Observers(%v) = %v, want nil", tc.obs, o)
				}
				return
			}
			if tc.self != nil && o != tc.self {
				t.Errorf("Observers of one observer returned %v, not the observer itself", o)
			}
			o.Observe(leasehold.Event{Kind: leasehold.EventAcquire, Key: "k"})
			if !slices.Equal(log, tc.want) {
				t.Errorf("called %v, want %v", log, tc.want)
			}
		})
	}
}

// ctxKey marks the caller's context.
type ctxKey struct{}

// callerOf returns what the caller put in ctx under ctxKey, or "".
func callerOf(ctx context.Context) string {
	if ctx == nil {
		return "<nil context>"
	}
	s, _ := ctx.Value(ctxKey{}).(string)
	return s
}

// TestEventsCarryTheCallersContext: every event's Context carries the
// values of the context of the call it reports: Acquire's (Do's, Claim's),
// Release's, and, for renewals and losses, the lease's (Acquire's values);
// a fence rejection carries the refused request's.
func TestEventsCarryTheCallersContext(t *testing.T) {
	rec := &recorder{}
	c := portableClient(t, rec)
	in := func(who string) context.Context { return context.WithValue(t.Context(), ctxKey{}, who) }
	l, err := c.Acquire(in("acquire"), "k", leasehold.AcquireOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Acquire(in("held"), "k", leasehold.AcquireOptions{}); !errors.Is(err, leasehold.ErrHeld) {
		t.Fatalf("second acquire: %v, want ErrHeld", err)
	}
	if err := l.Release(in("release")); err != nil {
		t.Fatal(err)
	}
	if err := c.Do(in("do"), "k", leasehold.AcquireOptions{}, func(context.Context, *leasehold.Lease) error { return nil }); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Claim(in("claim"), "claimed", leasehold.AcquireOptions{}); err != nil {
		t.Fatal(err)
	}
	// A lease whose renewal is refused: the renewal and the loss carry
	// the lease's context, which has Acquire's values.
	c2, err := leasehold.New(refusingRenewals{memory.New(nil)}, &leasehold.Options{Observer: rec, TTL: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	l2, err := c2.Acquire(in("lost"), "lost", leasehold.AcquireOptions{})
	if err != nil {
		t.Fatal(err)
	}
	<-l2.Done()
	h := fence.MiddlewareOptions{OnStale: leasehold.FenceRejections(rec)}.Wrap(new(fence.MemoryGuard),
		http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	for _, tok := range []string{"7", "6"} {
		req := httptest.NewRequestWithContext(in("request "+tok), "PUT", "/doc", nil)
		req.Header.Set(fence.Header, tok)
		h.ServeHTTP(httptest.NewRecorder(), req)
	}

	rec.mu.Lock()
	defer rec.mu.Unlock()
	var got []string
	for _, e := range rec.events {
		got = append(got, e.Kind.String()+" "+callerOf(e.Context))
		if e.Kind == leasehold.EventAcquire && (e.Held < 0 || e.Held > e.Wait || e.Err != nil && e.Held != 0) {
			t.Errorf("acquire event %+v: Held must be between 0 and Wait for a grant, 0 for a refusal", e)
		}
	}
	want := []string{"acquire acquire", "acquire held", "release release", "acquire do", "release do",
		"acquire claim", "acquire lost", "renew lost", "lost lost", "fence_reject request 6"}
	if !slices.Equal(got, want) {
		t.Errorf("events and their callers:\n got %q\nwant %q", got, want)
	}
}

// ctxHandler is a slog handler that keeps the caller of each record's
// context.
type ctxHandler struct {
	mu      sync.Mutex
	callers []string
}

func (h *ctxHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h *ctxHandler) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h *ctxHandler) WithGroup(string) slog.Handler            { return h }
func (h *ctxHandler) Handle(ctx context.Context, _ slog.Record) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.callers = append(h.callers, callerOf(ctx))
	return nil
}

// TestSlogObserverLogsWithTheEventsContext: the slog observer hands the
// event's context to its handler (where a handler finds the caller's trace
// ids), and logs an Event made by hand, without a context, too.
func TestSlogObserverLogsWithTheEventsContext(t *testing.T) {
	h := &ctxHandler{}
	o := leasehold.SlogObserver(slog.New(h))
	ctx := context.WithValue(t.Context(), ctxKey{}, "caller")
	o.Observe(leasehold.Event{Context: ctx, Kind: leasehold.EventAcquire, Key: "k"})
	o.Observe(leasehold.Event{Kind: leasehold.EventRelease, Key: "k"})
	if want := []string{"caller", ""}; !slices.Equal(h.callers, want) {
		t.Fatalf("handler saw callers %q, want %q", h.callers, want)
	}
}

// Observers combines observers: here two that print, with a nil one (an
// optional observer left unset) skipped.
func ExampleObservers() {
	metrics := leasehold.ObserverFunc(func(e leasehold.Event) { fmt.Println("metrics:", e.Kind, e.Key) })
	var traces leasehold.Observer // not configured
	logs := leasehold.ObserverFunc(func(e leasehold.Event) { fmt.Println("logs:", e.Kind, e.Key) })
	obs := leasehold.Observers(metrics, traces, logs)
	obs.Observe(leasehold.Event{Kind: leasehold.EventAcquire, Key: "reports"})
	// Output:
	// metrics: acquire reports
	// logs: acquire reports
}
