package benchcycle

import (
	"bytes"
	"slices"
	"strings"
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
	// Each round's ratio is of that round's two rates (1.5, 3, 1 and 2):
	// their median (the upper middle), then the smallest and largest. The
	// ratio of the medians over the rounds, 200/100, would be 2.000 too, so
	// round 4 makes them differ: b alone in round 5 counts for nothing.
	for round, v := range []float64{150, 300, 200, 400} {
		r.record("g1", "a", round+1, v)
		r.record("g1", "b", round+1, []float64{100, 100, 200, 200}[round])
	}
	r.record("g1", "b", 5, 1)
	var out bytes.Buffer
	r.Summary(&out, "a-vs-b-1", "g1", "a", "b")
	r.Summary(&out, "a-vs-c-1", "g1", "a", "c") // c never measured: no line
	if got, want := out.String(), "SUMMARY a-vs-b-1 2.000 1.000 3.000\n"; got != want {
		t.Errorf("Summary printed %q, want %q", got, want)
	}
}

// TestTable: the scenarios and implementations in the order measured, each
// rate with its ratio over the reference's, "-" where none was measured.
func TestTable(t *testing.T) {
	var r Results
	r.record("g8", "a", 1, 200)
	r.record("g1", "a", 1, 100)
	r.record("g1", "b", 1, 50)
	var out bytes.Buffer
	r.Table(&out, "b")
	var got []string
	for _, l := range strings.Split(strings.TrimSpace(out.String()), "\n")[1:] {
		got = append(got, strings.Join(strings.Fields(l), " "))
	}
	want := []string{"implementation g8 g1", "a 200 100 (2.00x)", "b - 50 (1.00x)"}
	if !slices.Equal(got, want) {
		t.Errorf("Table printed\n%s\nwant the rows %q", out.String(), want)
	}
}
