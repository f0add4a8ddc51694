package otel_test

import (
	"context"
	"math"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
)

// snapshot is one collection of the manual reader's metrics.
type snapshot struct {
	t  *testing.T
	rm metricdata.ResourceMetrics
}

func collect(t *testing.T, r *sdkmetric.ManualReader) snapshot {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := r.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	return snapshot{t, rm}
}

func (s snapshot) metric(name string) (metricdata.Metrics, bool) {
	for _, sm := range s.rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name == name {
				return m, true
			}
		}
	}
	return metricdata.Metrics{}, false
}

// count is the value of the counter or up-down counter name for exactly
// the attributes kvs (0 if it has no such point).
func (s snapshot) count(name string, kvs ...attribute.KeyValue) int64 {
	s.t.Helper()
	m, ok := s.metric(name)
	if !ok {
		return 0
	}
	sum, ok := m.Data.(metricdata.Sum[int64])
	if !ok {
		s.t.Fatalf("%s is a %T, want an int64 sum", name, m.Data)
	}
	v, _ := point(sum.DataPoints, kvs)
	return v
}

// point is the value of the data point with exactly the attributes kvs,
// and whether there is one.
func point[N int64 | float64](points []metricdata.DataPoint[N], kvs []attribute.KeyValue) (N, bool) {
	want := attribute.NewSet(kvs...)
	for _, p := range points {
		if p.Attributes.Equals(&want) {
			return p.Value, true
		}
	}
	return 0, false
}

// points is the number of distinct attribute sets of name.
func (s snapshot) points(name string) int {
	m, _ := s.metric(name)
	switch d := m.Data.(type) {
	case metricdata.Sum[int64]:
		return len(d.DataPoints)
	case metricdata.Histogram[float64]:
		return len(d.DataPoints)
	case metricdata.Gauge[float64]:
		return len(d.DataPoints)
	}
	return 0
}

// gauge is the value of the float64 gauge name for exactly kvs, and
// whether it has that point.
func (s snapshot) gauge(name string, kvs ...attribute.KeyValue) (float64, bool) {
	s.t.Helper()
	m, ok := s.metric(name)
	if !ok {
		return 0, false
	}
	g, ok := m.Data.(metricdata.Gauge[float64])
	if !ok {
		s.t.Fatalf("%s is a %T, want a float64 gauge", name, m.Data)
	}
	return point(g.DataPoints, kvs)
}

// hist is the count and sum of the histogram name for exactly kvs.
func (s snapshot) hist(name string, kvs ...attribute.KeyValue) (uint64, float64) {
	s.t.Helper()
	m, ok := s.metric(name)
	if !ok {
		return 0, 0
	}
	h, ok := m.Data.(metricdata.Histogram[float64])
	if !ok {
		s.t.Fatalf("%s is a %T, want a float64 histogram", name, m.Data)
	}
	want := attribute.NewSet(kvs...)
	for _, p := range h.DataPoints {
		if p.Attributes.Equals(&want) {
			return p.Count, p.Sum
		}
	}
	return 0, 0
}

// wantCount checks a counter's value.
func (s snapshot) wantCount(name string, want int64, kvs ...attribute.KeyValue) {
	s.t.Helper()
	if got := s.count(name, kvs...); got != want {
		s.t.Errorf("%s%v = %d, want %d", name, kvs, got, want)
	}
}

// wantHist checks a histogram's count and sum (in seconds; to the
// nanosecond, the clock's resolution, since float sums round).
func (s snapshot) wantHist(name string, count uint64, sum float64, kvs ...attribute.KeyValue) {
	s.t.Helper()
	gotN, gotSum := s.hist(name, kvs...)
	if gotN != count || math.Abs(gotSum-sum) > 1e-9 {
		s.t.Errorf("%s%v: count %d sum %.9f, want count %d sum %.9f", name, kvs, gotN, gotSum, count, sum)
	}
}
