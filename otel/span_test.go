package otel_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/leasehold-go/leasehold"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// caller starts a span named name, as the user's code would, and returns
// its context and span context.
func (r *rig) caller(name string) (context.Context, trace.SpanContext) {
	ctx, s := r.tp.Tracer("the caller").Start(r.t.Context(), name)
	r.t.Cleanup(func() { s.End() })
	return ctx, s.SpanContext()
}

// ended returns the spans named name that have ended, in order.
func (r *rig) ended(name string) []sdktrace.ReadOnlySpan {
	var out []sdktrace.ReadOnlySpan
	for _, s := range r.spans.Ended() {
		if s.Name() == name {
			out = append(out, s)
		}
	}
	return out
}

// wantChild checks that s is a child of the caller's span.
func wantChild(t *testing.T, s sdktrace.ReadOnlySpan, caller trace.SpanContext) {
	t.Helper()
	if p := s.Parent(); !p.IsValid() || !p.Equal(caller) || s.SpanContext().TraceID() != caller.TraceID() {
		t.Errorf("%s: parent %v (valid %v), trace %v; want the caller's span %v", s.Name(), p.SpanID(), p.IsValid(), s.SpanContext().TraceID(), caller.SpanID())
	}
}

// wantStatus checks a span's status code and outcome attribute.
func wantStatus(t *testing.T, s sdktrace.ReadOnlySpan, code codes.Code, outcome string) {
	t.Helper()
	if s.Status().Code != code || spanAttr(s, "leasehold.outcome").AsString() != outcome {
		t.Errorf("%s: status %v, outcome %q; want %v, %q", s.Name(), s.Status(), spanAttr(s, "leasehold.outcome").AsString(), code, outcome)
	}
}

// TestSpansAreChildrenOfTheCallers: the acquire and release spans are
// children of the span in the context the caller passed to Acquire,
// Release or Do; a renewal's span is a root linked to the Acquire caller's
// span. A refusal because the key is held is an outcome (status unset,
// leasehold.outcome=held); a store failure is an error.
func TestSpansAreChildrenOfTheCallers(t *testing.T) {
	r := newRig(t, false)
	acqCtx, acqSpan := r.caller("acquire the job")
	l, err := r.client.Acquire(acqCtx, "job", leasehold.AcquireOptions{})
	if err != nil {
		t.Fatal(err)
	}
	r.store.await(t, "acquire")
	r.events.await(t, leasehold.EventAcquire)
	heldCtx, heldSpan := r.caller("try the held job")
	if _, err := r.client.Acquire(heldCtx, "job", leasehold.AcquireOptions{}); !errors.Is(err, leasehold.ErrHeld) {
		t.Fatalf("second acquire: %v, want ErrHeld", err)
	}
	r.store.await(t, "acquire")
	r.events.await(t, leasehold.EventAcquire)
	r.renewal(6 * time.Second)
	relCtx, relSpan := r.caller("release the job")
	if err := l.Release(relCtx); err != nil {
		t.Fatal(err)
	}
	r.store.await(t, "release")
	r.events.await(t, leasehold.EventRelease)

	doCtx, doSpan := r.caller("do the job")
	if err := r.client.Do(doCtx, "job", leasehold.AcquireOptions{}, func(context.Context, *leasehold.Lease) error { return nil }); err != nil {
		t.Fatal(err)
	}
	r.store.failAcquires(&leasehold.StoreError{Store: "memory", Op: "acquire", Err: errors.New("connection refused")})
	failCtx, failSpan := r.caller("acquire while the store is down")
	if _, err := r.client.Acquire(failCtx, "job", leasehold.AcquireOptions{}); !errors.Is(err, leasehold.ErrStore) {
		t.Fatalf("acquire from a failing store: %v, want a store error", err)
	}

	acquires, releases, renewals := r.ended("leasehold.acquire"), r.ended("leasehold.release"), r.ended("leasehold.renew")
	if len(acquires) != 4 || len(releases) != 2 || len(renewals) != 1 {
		t.Fatalf("%d acquire, %d release, %d renew spans; want 4, 2, 1", len(acquires), len(releases), len(renewals))
	}
	for i, caller := range []trace.SpanContext{acqSpan, heldSpan, doSpan, failSpan} {
		wantChild(t, acquires[i], caller)
	}
	wantStatus(t, acquires[0], codes.Unset, "granted")
	wantStatus(t, acquires[1], codes.Unset, "held")
	wantStatus(t, acquires[2], codes.Unset, "granted")
	wantStatus(t, acquires[3], codes.Error, "error")
	if n := len(acquires[1].Events()); n != 0 {
		t.Errorf("the held acquire's span has %d events, want no error recorded", n)
	}
	wantChild(t, releases[0], relSpan)
	wantChild(t, releases[1], doSpan)

	rn := renewals[0]
	if rn.Parent().IsValid() {
		t.Errorf("renewal span's parent %v, want a root", rn.Parent().SpanID())
	}
	if links := rn.Links(); len(links) != 1 || !links[0].SpanContext.Equal(acqSpan) {
		t.Errorf("renewal span's links %+v, want one to the Acquire caller's span %v", links, acqSpan.SpanID())
	}
}

// TestSpansWithoutACallerSpanAreRoots: a caller whose context has no span
// gets root spans, as before.
func TestSpansWithoutACallerSpanAreRoots(t *testing.T) {
	r := newRig(t, false)
	l, sent := r.acquire("job")
	r.release(l, sent)
	for _, s := range r.spans.Ended() {
		if s.Parent().IsValid() || len(s.Links()) != 0 {
			t.Errorf("%s: parent %v, links %v; want a root without links", s.Name(), s.Parent().SpanID(), s.Links())
		}
	}
}
