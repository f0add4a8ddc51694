package wire

import (
	"math"
	"testing"
	"time"
)

// TestMillis: a TTL asked for rounds up, one granted rounds down, and
// nothing overflows.
func TestMillis(t *testing.T) {
	tests := []struct {
		d           time.Duration
		ceil, floor int64
	}{
		{0, 0, 0},
		{time.Nanosecond, 1, 0},
		{time.Millisecond, 1, 1},
		{1500 * time.Microsecond, 2, 1},
		{-time.Millisecond, -1, 0},
		{24 * time.Hour, 86400000, 86400000},
		{math.MaxInt64, math.MaxInt64/1000000 + 1, math.MaxInt64 / 1000000},
	}
	for _, tc := range tests {
		if got := MsCeil(tc.d); got != tc.ceil {
			t.Errorf("MsCeil(%s) = %d, want %d", tc.d, got, tc.ceil)
		}
		if got := MsFloor(tc.d); got != tc.floor {
			t.Errorf("MsFloor(%s) = %d, want %d", tc.d, got, tc.floor)
		}
	}
	for _, n := range []int64{math.MaxInt64, math.MinInt64 + 1, 1 << 50} {
		if d := Ms(n); (n > 0) != (d > 0) {
			t.Errorf("Ms(%d) = %s: overflowed", n, d)
		}
	}
	if Ms(1500) != 1500*time.Millisecond {
		t.Errorf("Ms(1500) = %s", Ms(1500))
	}
}
