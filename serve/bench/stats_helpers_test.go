package bench

import (
	"strings"
	"testing"
	"time"
)

func TestQuantile(t *testing.T) {
	ms := func(v ...int) []time.Duration {
		out := make([]time.Duration, len(v))
		for i, x := range v {
			out[i] = time.Duration(x) * time.Millisecond
		}
		return out
	}
	hundred := make([]int, 100)
	for i := range hundred {
		hundred[i] = 100 - i // 100..1, unsorted
	}
	for _, c := range []struct {
		name string
		d    []time.Duration
		q    float64
		want time.Duration
	}{
		{"none", nil, 0.5, 0},
		{"one", ms(7), 0.99, 7 * time.Millisecond},
		{"p50 of 1..100", ms(hundred...), 0.50, 50 * time.Millisecond},
		{"p99 of 1..100", ms(hundred...), 0.99, 99 * time.Millisecond},
		{"max of 1..100", ms(hundred...), 1, 100 * time.Millisecond},
		{"min of 1..100", ms(hundred...), 0, 1 * time.Millisecond},
		{"p99 of 3 takes the largest", ms(3, 1, 2), 0.99, 3 * time.Millisecond},
		{"p50 of 4", ms(4, 3, 2, 1), 0.5, 2 * time.Millisecond},
	} {
		t.Run(c.name, func(t *testing.T) {
			before := append([]time.Duration(nil), c.d...)
			if got := quantile(c.d, c.q); got != c.want {
				t.Errorf("quantile(%v, %v) = %v, want %v", c.d, c.q, got, c.want)
			}
			for i := range before {
				if before[i] != c.d[i] {
					t.Fatalf("quantile sorted its argument in place: %v", c.d)
				}
			}
		})
	}
}

func TestMedian(t *testing.T) {
	for _, c := range []struct {
		v    []float64
		want float64
	}{
		{nil, 0},
		{[]float64{5}, 5},
		{[]float64{3, 1, 2}, 2},
		{[]float64{4, 1, 3, 2}, 3},
	} {
		if got := median(c.v); got != c.want {
			t.Errorf("median(%v) = %v, want %v", c.v, got, c.want)
		}
	}
}

// TestSummary checks the ratios' direction and the SUMMARY lines that
// scripts/bench-page reads: a served path half as fast costs 2x at 1
// goroutine and reaches 0.5x at 64.
func TestSummary(t *testing.T) {
	resultsMu.Lock()
	saved, savedFig, savedIDs := results, figures, figureIDs
	results, figures, figureIDs = map[string]map[string]map[string]float64{}, map[string]float64{}, nil
	resultsMu.Unlock()
	t.Cleanup(func() {
		resultsMu.Lock()
		results, figures, figureIDs = saved, savedFig, savedIDs
		resultsMu.Unlock()
	})
	for r, v := range []float64{1000, 900, 1100} { // rounds: the median is 1000
		record("g1", "embedded/direct", "r"+string(rune('0'+r)), sample{perSec: v})
		record("g64", "embedded/direct", "r"+string(rune('0'+r)), sample{perSec: 4 * v})
	}
	record("g1", "embedded/served", "r0", sample{perSec: 500})
	record("g64", "embedded/served", "r0", sample{perSec: 2000})
	record("g1", "redis/direct", "r0", sample{perSec: 100}) // no served rate: no line
	setFigure("serve-fanout-p99-ms", 12.5)
	var out strings.Builder
	printSummary(&out)
	for _, want := range []string{
		"SUMMARY serve-embedded-over-direct-1 2.000\n",
		"SUMMARY serve-embedded-vs-direct-64 0.500\n",
		"SUMMARY serve-fanout-p99-ms 12.500\n",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the summary has no line %q:\n%s", want, out.String())
		}
	}
	if strings.Contains(out.String(), "serve-redis-") {
		t.Errorf("a ratio without its served rate was printed:\n%s", out.String())
	}
}

func TestStatusKB(t *testing.T) {
	status := "Name:\tleasehold\nVmHWM:\t  70000 kB\nVmRSS:\t   66680 kB\nRssAnon:\t    6852 kB\nThreads:\t7\n"
	for _, c := range []struct {
		name string
		want int64
		ok   bool
	}{
		{"VmRSS:", 66680 << 10, true},
		{"VmHWM:", 70000 << 10, true},
		{"RssAnon:", 6852 << 10, true},
		{"Threads:", 0, false}, // no kB unit
		{"RssFile:", 0, false}, // missing
	} {
		got, err := statusKB(status, c.name)
		if (err == nil) != c.ok || got != c.want {
			t.Errorf("statusKB(%q) = %d, %v; want %d, ok %v", c.name, got, err, c.want, c.ok)
		}
		if err != nil && !strings.Contains(err.Error(), c.name) {
			t.Errorf("statusKB(%q)'s error does not name the line: %v", c.name, err)
		}
	}
}
