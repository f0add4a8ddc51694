package bench

import (
	"testing"
	"time"
)

func TestPercentile(t *testing.T) {
	ten := []time.Duration{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	hundred := make([]time.Duration, 100)
	for i := range hundred {
		hundred[i] = time.Duration(i + 1)
	}
	for _, tc := range []struct {
		name   string
		sorted []time.Duration
		p      float64
		want   time.Duration
	}{
		{"empty", nil, 50, 0},
		{"one p1", []time.Duration{7}, 1, 7},
		{"one p99", []time.Duration{7}, 99, 7},
		{"ten p50", ten, 50, 5},
		{"ten p90", ten, 90, 9},
		{"ten p99", ten, 99, 10},
		{"ten p100", ten, 100, 10},
		{"ten p0 is the minimum", ten, 0, 1},
		{"ten above 100 is the maximum", ten, 150, 10},
		{"ten p10", ten, 10, 1},
		{"ten p11", ten, 11, 2},
		{"hundred p50", hundred, 50, 50},
		{"hundred p99", hundred, 99, 99},
		{"hundred p99.5", hundred, 99.5, 100},
		{"two p50", []time.Duration{10, 20}, 50, 10},
		{"two p51", []time.Duration{10, 20}, 51, 20},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Percentile(tc.sorted, tc.p); got != tc.want {
				t.Errorf("Percentile(%v, %v) = %v, want %v", tc.sorted, tc.p, got, tc.want)
			}
		})
	}
}

func TestSummarize(t *testing.T) {
	for _, tc := range []struct {
		name    string
		samples []time.Duration
		want    Summary
	}{
		{"none", nil, Summary{}},
		{"one", []time.Duration{3 * time.Millisecond}, Summary{N: 1, Min: 3 * time.Millisecond, Mean: 3 * time.Millisecond,
			P50: 3 * time.Millisecond, P90: 3 * time.Millisecond, P99: 3 * time.Millisecond, Max: 3 * time.Millisecond}},
		{"unsorted", []time.Duration{5, 1, 4, 2, 3}, Summary{N: 5, Min: 1, Mean: 3, P50: 3, P90: 5, P99: 5, Max: 5}},
		{"duplicates", []time.Duration{2, 2, 2, 2}, Summary{N: 4, Min: 2, Mean: 2, P50: 2, P90: 2, P99: 2, Max: 2}},
		{"outlier", []time.Duration{1, 1, 1, 1, 1, 1, 1, 1, 1, 91}, Summary{N: 10, Min: 1, Mean: 10, P50: 1, P90: 1, P99: 91, Max: 91}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Summarize(tc.samples); got != tc.want {
				t.Errorf("Summarize = %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestSummarizeSortsInPlace(t *testing.T) {
	s := []time.Duration{3, 1, 2}
	Summarize(s)
	for i := 1; i < len(s); i++ {
		if s[i-1] > s[i] {
			t.Fatalf("samples not sorted after Summarize: %v", s)
		}
	}
}

func TestFormat(t *testing.T) {
	for _, tc := range []struct{ got, want string }{
		{fmtMS(0), "-"},
		{fmtMS(39 * time.Microsecond), "0.039"},
		{fmtMS(520 * time.Microsecond), "0.52"},
		{fmtMS(3210 * time.Microsecond), "3.21"},
		{fmtMS(12345 * time.Microsecond), "12.3"},
		{fmtMS(1234 * time.Millisecond), "1234"},
		{fmtRate(0), "-"},
		{fmtRate(12.34), "12.3"},
		{fmtRate(18421.4), "18,421"},
		{fmtRate(1234567), "1,234,567"},
		{fmtInt(-1234), "-1,234"},
		{fmtInt(999), "999"},
		{fmtBytes(-1), "-"},
		{fmtBytes(512), "512 B"},
		{fmtBytes(1536), "1.5 KiB"},
		{fmtBytes(3 * 1024 * 1024), "3.0 MiB"},
		{fmtRange(3*time.Millisecond, 5*time.Millisecond), "3.00-5.00"},
		{fmtRange(500*time.Microsecond, 500*time.Microsecond), "0.50"},
		{tickMS(0.01), "0.01 ms"},
		{tickMS(1000), "1 s"},
		{tickCount(1e5), "100k"},
		{tickCount(10), "10"},
	} {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
}
