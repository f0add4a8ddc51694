package benchcycle

import (
	"bytes"
	"testing"
)

func TestMedian(t *testing.T) {
	for _, c := range []struct {
		in   []float64
		want float64
	}{{nil, 0}, {[]float64{3}, 3}, {[]float64{5, 1, 3}, 3}, {[]float64{4, 1, 3, 2}, 3}} {
		if got := Median(c.in); got != c.want {
			t.Errorf("Median(%v) = %v, want %v", c.in, got, c.want)
		}
	}
}

func TestSummary(t *testing.T) {
	var r Results
	for round, v := range []float64{100, 300, 200} {
		r.record("g1", "a", round+1, v)
		r.record("g1", "b", round+1, 100)
	}
	var out bytes.Buffer
	r.Summary(&out, "a-vs-b-1", "g1", "a", "b")
	r.Summary(&out, "a-vs-c-1", "g1", "a", "c") // c never measured: no line
	if got, want := out.String(), "SUMMARY a-vs-b-1 2.000\n"; got != want {
		t.Errorf("Summary printed %q, want %q", got, want)
	}
}
