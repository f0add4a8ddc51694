package otel_test

import (
	"errors"
	"testing"
	"time"

	"github.com/leasehold-go/leasehold"
	lhotel "github.com/leasehold-go/leasehold/otel"
	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

// rig is a leasehold client over the scripted memory store, on the fake
// clock, observed by an otel Observer with an in-memory metric reader and
// span recorder.
type rig struct {
	t      *testing.T
	clock  *fakeClock
	store  *scripted
	events *tee
	obs    *lhotel.Observer
	client *leasehold.Client
	reader *sdkmetric.ManualReader
	spans  *tracetest.SpanRecorder
	tp     *sdktrace.TracerProvider
}

func newRig(t *testing.T, keyAttr bool) *rig {
	r := &rig{t: t, clock: newFakeClock(), reader: sdkmetric.NewManualReader(), spans: tracetest.NewSpanRecorder()}
	r.store = newScripted(r.clock)
	r.tp = sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(r.spans))
	obs, err := lhotel.New(lhotel.Options{
		MeterProvider:  sdkmetric.NewMeterProvider(sdkmetric.WithReader(r.reader)),
		TracerProvider: r.tp,
		KeyAttribute:   keyAttr,
		Clock:          r.clock,
	})
	if err != nil {
		t.Fatal(err)
	}
	r.obs = obs
	r.events = &tee{next: obs, events: make(chan leasehold.Event, 64)}
	r.client, err = leasehold.New(r.store, &leasehold.Options{
		Observer: r.events, Clock: r.clock, Backoff: leasehold.ConstBackoff(time.Second)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.client.Close() })
	return r
}

// acquire takes key at once, and returns the lease and the time its grant
// was sent.
func (r *rig) acquire(key string) (*leasehold.Lease, time.Time) {
	r.t.Helper()
	sent := r.clock.Now()
	l, err := r.client.Acquire(r.t.Context(), key, leasehold.AcquireOptions{})
	if err != nil {
		r.t.Fatal(err)
	}
	r.store.await(r.t, "acquire")
	r.events.await(r.t, leasehold.EventAcquire)
	return l, sent
}

// renewal moves the clock by d, which must bring a renewal due, and waits
// for its event.
func (r *rig) renewal(d time.Duration) leasehold.Event {
	r.t.Helper()
	r.clock.advanceFiring(r.t, d)
	r.store.await(r.t, "renew")
	return r.events.await(r.t, leasehold.EventRenew)
}

// release releases l and returns how long it was held.
func (r *rig) release(l *leasehold.Lease, sent time.Time) time.Duration {
	r.t.Helper()
	if err := l.Release(r.t.Context()); err != nil {
		r.t.Fatal(err)
	}
	r.store.await(r.t, "release")
	r.events.await(r.t, leasehold.EventRelease)
	return r.clock.Now().Sub(sent)
}

// held is the seconds of each duration, summed.
func seconds(ds ...time.Duration) float64 {
	var s float64
	for _, d := range ds {
		s += d.Seconds()
	}
	return s
}

var (
	granted  = attribute.String("leasehold.outcome", "granted")
	heldOut  = attribute.String("leasehold.outcome", "held")
	ok       = attribute.String("leasehold.outcome", "ok")
	errorOut = attribute.String("leasehold.outcome", "error")
	notHeld  = attribute.String("leasehold.outcome", "not_held")
	opAcq    = attribute.String("leasehold.operation", "acquire")
	opRenew  = attribute.String("leasehold.operation", "renew")
	opRel    = attribute.String("leasehold.operation", "release")
)

// lifecycle is what TestObserverRecordsTheLifecycle drove, for checking.
type lifecycle struct {
	heldA, heldC, heldB, heldD time.Duration
	tokens                     map[string]uint64
}

// TestObserverRecordsTheLifecycle drives a client through grants, a
// refusal, a waiting acquire, renewals (passed, in jeopardy, refused), a
// loss by refusal and one by expiry, releases and a fence rejection, and
// checks every metric's exact value and every span.
func TestObserverRecordsTheLifecycle(t *testing.T) {
	r := newRig(t, false)
	var lc lifecycle
	lc.tokens = map[string]uint64{}
	r.grantsAndRenewals(&lc)
	r.waitingAcquireAndLosses(&lc)
	r.fenceRejection(lc.tokens["B"], lc.tokens["A"])
	if err := r.client.Close(); err != nil {
		t.Fatal(err)
	}
	r.checkMetrics(lc)
	r.checkSpans(lc)
}

// grantsAndRenewals: A is granted, a second acquire finds it held, A is
// renewed, fails a renewal (jeopardy), is renewed on the retry and is
// released.
func (r *rig) grantsAndRenewals(lc *lifecycle) {
	t := r.t
	a, sentA := r.acquire("job")
	lc.tokens["A"] = a.Token()
	if got := collect(t, r.reader).count(lhotel.MetricLeasesHeld); got != 1 {
		t.Errorf("leases held with A: %d, want 1", got)
	}
	if _, err := r.client.Acquire(t.Context(), "job", leasehold.AcquireOptions{}); !errors.Is(err, leasehold.ErrHeld) {
		t.Fatalf("second acquire: %v, want ErrHeld", err)
	}
	r.store.await(t, "acquire")
	r.events.await(t, leasehold.EventAcquire)
	if e := r.renewal(6 * time.Second); e.Err != nil {
		t.Fatalf("first renewal: %v", e.Err)
	}
	r.store.failRenewals(&leasehold.StoreError{Store: "memory", Op: "renew", Err: errors.New("connection reset")})
	if e := r.renewal(6 * time.Second); e.Err == nil {
		t.Fatal("second renewal passed, want the failure")
	}
	r.store.failRenewals(nil)
	if e := r.renewal(time.Second); e.Err != nil { // the retry, after the backoff
		t.Fatalf("retried renewal: %v", e.Err)
	}
	lc.heldA = r.release(a, sentA)
}
