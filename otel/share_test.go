package otel_test

import (
	"testing"
	"time"

	"github.com/leasehold-go/leasehold"
	lhotel "github.com/leasehold-go/leasehold/otel"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
)

// newObserver is an Observer on mp, on clock.
func newObserver(t *testing.T, mp *sdkmetric.MeterProvider, clock leasehold.Clock) *lhotel.Observer {
	t.Helper()
	o, err := lhotel.New(lhotel.Options{MeterProvider: mp, Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	return o
}

// grant and end are a lease's events as a client reports them, made by
// hand.
func grant(key string, token uint64, held time.Duration) leasehold.Event {
	return leasehold.Event{Kind: leasehold.EventAcquire, Key: key, Token: token, Held: held}
}

func end(key string, token uint64) leasehold.Event {
	return leasehold.Event{Kind: leasehold.EventRelease, Key: key, Token: token}
}

// TestEndBeforeGrantLeavesNoAge: a lease whose end reaches the observer
// before its grant is not counted as held forever.
func TestEndBeforeGrantLeavesNoAge(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	o := newObserver(t, sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader)), newFakeClock())
	o.Observe(end("k", 1))
	o.Observe(grant("k", 1, time.Second))
	s := collect(t, reader)
	s.wantAge(-1)
	s.wantCount(lhotel.MetricLeasesHeld, 0)
}

// TestCloseUnregistersTheAge: a closed observer no longer reports its
// leases' age; Close again returns nil.
func TestCloseUnregistersTheAge(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	o := newObserver(t, sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader)), newFakeClock())
	o.Observe(grant("k", 1, time.Second))
	collect(t, reader).wantAge(time.Second)
	for range 2 {
		if err := o.Close(); err != nil {
			t.Fatal(err)
		}
		collect(t, reader).wantAge(-1)
	}
}

// TestOneObserverPerProvider: one observer shared by two clients reports
// the oldest lease of either; of two observers on one provider, the one
// left once the other is closed reports its own.
func TestOneObserverPerProvider(t *testing.T) {
	clock := newFakeClock()
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	shared := newObserver(t, mp, clock)
	// Two clients' leases: the same key and token on two stores.
	shared.Observe(grant("k", 1, time.Hour))
	shared.Observe(grant("k", 1, time.Second))
	collect(t, reader).wantAge(time.Hour)
	shared.Observe(end("k", 1)) // the first granted ends first
	collect(t, reader).wantAge(time.Second)
	if err := shared.Close(); err != nil {
		t.Fatal(err)
	}

	a, b := newObserver(t, mp, clock), newObserver(t, mp, clock)
	a.Observe(grant("a", 1, time.Second))
	b.Observe(grant("b", 1, time.Hour))
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	collect(t, reader).wantAge(time.Hour)
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	collect(t, reader).wantAge(-1)
}
