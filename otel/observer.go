package otel

import (
	"context"
	"errors"
	"sync"

	"github.com/leasehold-go/leasehold"
	global "go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"
)

// ScopeName is the instrumentation scope of the observer's meter and
// tracer.
const ScopeName = "github.com/leasehold-go/leasehold/otel"

// Options configure an Observer. The zero value reports to the global
// providers, without per-key attributes.
type Options struct {
	// MeterProvider makes the observer's instruments. Nil means the
	// global provider (go.opentelemetry.io/otel's GetMeterProvider) as it
	// is when New is called; that provider forwards to one set later.
	MeterProvider metric.MeterProvider
	// TracerProvider makes the observer's spans. Nil means the global
	// provider (GetTracerProvider), likewise.
	TracerProvider trace.TracerProvider
	// KeyAttribute adds the lease's key (leasehold.key) to every
	// measurement but the fence rejections. Off by default, to bound the
	// number of series: turn it on only when the keys are few and fixed.
	KeyAttribute bool
	// Clock times the spans and the leases' ages. Nil means the system
	// clock; give the client's Options.Clock when that is another one, so
	// that the events' durations and the observer's now agree.
	Clock leasehold.Clock
}

// Observer reports a leasehold client's events as metrics and spans. It
// implements leasehold.Observer; it is safe for concurrent use and never
// blocks. Make it with New, and Close it when done with it.
//
// Make one Observer per MeterProvider and give it to every client (and
// fence helper) that reports there: it tells apart the leases of all of
// them. Two Observers on one provider report the lease age gauge's series
// twice over, and the provider keeps only one of their values, not the
// older lease's.
type Observer struct {
	keyAttr bool
	clock   leasehold.Clock
	tracer  trace.Tracer
	m       instruments
	holds   holds

	age       metric.Float64ObservableGauge
	reg       metric.Registration // the age gauge's callback
	closeOnce sync.Once
	closeErr  error
}

var _ leasehold.Observer = (*Observer)(nil)

// New returns an Observer with its instruments made. It fails only if the
// meter provider refuses an instrument.
func New(opts Options) (*Observer, error) {
	mp, tp := opts.MeterProvider, opts.TracerProvider
	if mp == nil {
		mp = global.GetMeterProvider()
	}
	if tp == nil {
		tp = global.GetTracerProvider()
	}
	o := &Observer{keyAttr: opts.KeyAttribute, clock: opts.Clock, tracer: tp.Tracer(ScopeName)}
	if o.clock == nil {
		o.clock = leasehold.SystemClock()
	}
	meter := mp.Meter(ScopeName)
	var err error
	if o.m, err = newInstruments(meter); err != nil {
		return nil, err
	}
	if o.age, err = meter.Float64ObservableGauge(MetricLeaseAge, metric.WithUnit("s"),
		metric.WithDescription("How long the oldest lease held now has been held, from its grant (by key with KeyAttribute).")); err != nil {
		return nil, err
	}
	if o.reg, err = meter.RegisterCallback(o.observeAges, o.age); err != nil {
		return nil, err
	}
	if !o.keyAttr {
		o.zero()
	}
	o.m.fenceRejections.Add(context.Background(), 0) // never by key
	return o, nil
}

// Close unregisters the lease age gauge's callback from the meter
// provider, so that the provider no longer reads this observer's leases:
// call it once the clients it observes are closed, when the provider
// outlives the observer (a provider shut down drops it anyway). The
// other instruments stay (OpenTelemetry cannot remove an instrument), and
// events observed after Close still count in them. Calling Close again
// returns the first call's result.
func (o *Observer) Close() error {
	o.closeOnce.Do(func() { o.closeErr = o.reg.Unregister() })
	return o.closeErr
}

// zero makes every counter's series, at 0, so that a rate or an increase
// over it sees the first event (a series that first appears at 1 shows no
// increase). Series per key cannot be known in advance.
func (o *Observer) zero() {
	ctx, none := context.Background(), o.attrs("")
	for _, outcome := range []string{"granted", "held", "error"} {
		o.m.acquires.Add(ctx, 0, o.attrs("", attrOutcome.String(outcome)))
	}
	for _, outcome := range []string{"jeopardy", "lost"} {
		o.m.renewFailures.Add(ctx, 0, o.attrs("", attrOutcome.String(outcome)))
	}
	for _, reason := range []string{"expired", "not_held", "other"} {
		o.m.losses.Add(ctx, 0, o.attrs("", attrReason.String(reason)))
	}
	o.m.contention.Add(ctx, 0, none)
	o.m.held.Add(ctx, 0, none)
}

// Observe records e; see the package documentation for what each event
// kind adds to which metric.
//
// The measurements are made in the event's Context, so that an exemplar
// can name the caller's trace.
func (o *Observer) Observe(e leasehold.Event) {
	ctx := e.Context
	if ctx == nil {
		ctx = context.Background() // an Event made by hand
	}
	switch e.Kind {
	case leasehold.EventAcquire:
		o.acquire(ctx, e)
	case leasehold.EventRenew:
		o.renew(ctx, e)
	case leasehold.EventLost:
		o.lost(ctx, e)
	case leasehold.EventRelease:
		o.release(ctx, e)
	case leasehold.EventFenceReject:
		// Never by key: a fenced resource is a row or a path, one per
		// write target, which no series budget allows for.
		o.m.fenceRejections.Add(ctx, 1)
	}
}

func (o *Observer) acquire(ctx context.Context, e leasehold.Event) {
	outcome := acquireOutcome(e.Err)
	with := o.attrs(e.Key, attrOutcome.String(outcome))
	o.m.acquires.Add(ctx, 1, with)
	o.m.acquireWait.Record(ctx, e.Wait.Seconds(), with)
	if n := contention(e.Attempts, outcome); n > 0 {
		o.m.contention.Add(ctx, int64(n), o.attrs(e.Key))
	}
	if e.Attempts == 1 {
		o.m.storeDuration.Record(ctx, e.Wait.Seconds(),
			o.attrs(e.Key, opAcquire, attrOutcome.String(storeOutcome(e.Err))))
	}
	if e.Err == nil && !e.Claimed {
		o.m.held.Add(ctx, 1, o.attrs(e.Key))
		o.granted(e)
	}
	o.span(ctx, "leasehold.acquire", e.Wait, e, attrOutcome.String(outcome), attribute.Int("leasehold.attempts", e.Attempts))
}

func (o *Observer) renew(ctx context.Context, e leasehold.Event) {
	o.m.storeDuration.Record(ctx, e.Latency.Seconds(),
		o.attrs(e.Key, opRenew, attrOutcome.String(storeOutcome(e.Err))))
	if e.Err != nil {
		result := "jeopardy"
		if errors.Is(e.Err, leasehold.ErrNotHeld) {
			result = "lost" // the client ends the lease: an EventLost follows
		}
		o.m.renewFailures.Add(ctx, 1, o.attrs(e.Key, attrOutcome.String(result)))
	}
	o.span(ctx, "leasehold.renew", e.Latency, e)
}

func (o *Observer) lost(ctx context.Context, e leasehold.Event) {
	o.m.losses.Add(ctx, 1, o.attrs(e.Key, attrReason.String(lossReason(e.Err))))
	o.m.leaseDuration.Record(ctx, e.Held.Seconds(), o.attrs(e.Key, attrEnd.String("lost")))
	o.m.held.Add(ctx, -1, o.attrs(e.Key))
	o.ended(e)
}

func (o *Observer) release(ctx context.Context, e leasehold.Event) {
	o.m.storeDuration.Record(ctx, e.Latency.Seconds(),
		o.attrs(e.Key, opRelease, attrOutcome.String(storeOutcome(e.Err))))
	if errors.Is(e.Err, leasehold.ErrLost) {
		// The store no longer held the grant: lost before the release.
		o.m.losses.Add(ctx, 1, o.attrs(e.Key, attrReason.String(lossReason(e.Err))))
	}
	o.m.leaseDuration.Record(ctx, e.Held.Seconds(), o.attrs(e.Key, attrEnd.String("released")))
	o.m.held.Add(ctx, -1, o.attrs(e.Key))
	o.ended(e)
	o.span(ctx, "leasehold.release", e.Latency, e)
}

// attrs is the measurement option for kvs, with the key when the observer
// adds it.
func (o *Observer) attrs(key string, kvs ...attribute.KeyValue) metric.MeasurementOption {
	if o.keyAttr {
		kvs = append(kvs, attrKey.String(key))
	}
	return metric.WithAttributeSet(attribute.NewSet(kvs...))
}
