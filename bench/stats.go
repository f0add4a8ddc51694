package bench

import (
	"math"
	"slices"
	"time"
)

// Summary describes a set of latency samples.
type Summary struct {
	N    int           // number of samples
	Min  time.Duration // smallest sample
	Mean time.Duration // arithmetic mean
	P50  time.Duration // median (nearest rank)
	P90  time.Duration // 90th percentile (nearest rank)
	P99  time.Duration // 99th percentile (nearest rank)
	Max  time.Duration // largest sample
}

// Summarize sorts samples in place and describes them. An empty or nil
// slice gives the zero Summary.
func Summarize(samples []time.Duration) Summary {
	if len(samples) == 0 {
		return Summary{}
	}
	slices.Sort(samples)
	var sum float64
	for _, s := range samples {
		sum += float64(s)
	}
	return Summary{
		N:    len(samples),
		Min:  samples[0],
		Mean: time.Duration(sum / float64(len(samples))),
		P50:  Percentile(samples, 50),
		P90:  Percentile(samples, 90),
		P99:  Percentile(samples, 99),
		Max:  samples[len(samples)-1],
	}
}

// Percentile returns the p-th percentile (0 < p <= 100) of sorted by the
// nearest-rank method: the smallest sample such that at least p percent of
// the samples are less than or equal to it. It returns 0 for an empty
// slice; p <= 0 gives the minimum and p > 100 the maximum.
func Percentile(sorted []time.Duration, p float64) time.Duration {
	n := len(sorted)
	if n == 0 {
		return 0
	}
	rank := int(math.Ceil(p / 100 * float64(n)))
	rank = min(max(rank, 1), n)
	return sorted[rank-1]
}

// ms converts d to fractional milliseconds, the unit of the JSON output.
func ms(d time.Duration) float64 {
	return float64(d) / float64(time.Millisecond)
}

// fromMS converts fractional milliseconds back to a duration.
func fromMS(f float64) time.Duration {
	return time.Duration(math.Round(f * float64(time.Millisecond)))
}

// perSec returns n events over d as a rate per second, 0 for d <= 0.
func perSec(n int64, d time.Duration) float64 {
	if d <= 0 {
		return 0
	}
	return float64(n) / d.Seconds()
}
