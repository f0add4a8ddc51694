package otel_test

import (
	"math"
	"testing"
	"time"

	lhotel "github.com/leasehold-go/leasehold/otel"
	"go.opentelemetry.io/otel/attribute"
)

// wantAge checks the lease age gauge's point for kvs: its value in seconds,
// or its absence when want is negative.
func (s snapshot) wantAge(want time.Duration, kvs ...attribute.KeyValue) {
	s.t.Helper()
	got, ok := s.gauge(lhotel.MetricLeaseAge, kvs...)
	switch {
	case want < 0 && ok:
		s.t.Errorf("%s%v = %v s, want no point", lhotel.MetricLeaseAge, kvs, got)
	case want >= 0 && (!ok || math.Abs(got-want.Seconds()) > 1e-9):
		s.t.Errorf("%s%v = %v s (present %v), want %v s", lhotel.MetricLeaseAge, kvs, got, ok, want.Seconds())
	}
}

// TestLeaseAgeWhileHeld: the lease age gauge shows, at each collection,
// how long the oldest lease held has been held, from its grant's send time
// (as the lease duration histogram measures it at the end), and nothing
// once no lease is held: the age of a lease still held, which the
// duration histogram cannot show until it ends.
func TestLeaseAgeWhileHeld(t *testing.T) {
	r := newRig(t, false)
	collect(t, r.reader).wantAge(-1)
	a, sentA := r.acquire("a")
	collect(t, r.reader).wantAge(acquireTook)
	r.renewal(6 * time.Second)
	ageA := acquireTook + 6*time.Second + renewTook
	collect(t, r.reader).wantAge(ageA)
	b, sentB := r.acquire("b")
	collect(t, r.reader).wantAge(ageA + acquireTook) // A is still the oldest
	r.release(a, sentA)
	collect(t, r.reader).wantAge(acquireTook + releaseTook) // B's
	r.release(b, sentB)
	s := collect(t, r.reader)
	s.wantAge(-1)
	if n := s.points(lhotel.MetricLeaseAge); n != 0 {
		t.Errorf("%s has %d points with no lease held, want none", lhotel.MetricLeaseAge, n)
	}
}

// TestLeaseAgeByKey: with KeyAttribute, each key held has its own age.
func TestLeaseAgeByKey(t *testing.T) {
	r := newRig(t, true)
	a, sentA := r.acquire("a")
	b, sentB := r.acquire("b")
	s := collect(t, r.reader)
	s.wantAge(2*acquireTook, attribute.String("leasehold.key", "a"))
	s.wantAge(acquireTook, attribute.String("leasehold.key", "b"))
	r.release(a, sentA)
	s = collect(t, r.reader)
	s.wantAge(-1, attribute.String("leasehold.key", "a"))
	s.wantAge(acquireTook+releaseTook, attribute.String("leasehold.key", "b"))
	r.release(b, sentB)
	if n := collect(t, r.reader).points(lhotel.MetricLeaseAge); n != 0 {
		t.Errorf("%s has %d points with no lease held, want none", lhotel.MetricLeaseAge, n)
	}
}
