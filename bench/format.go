package bench

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// fmtMS formats a latency in milliseconds with a precision that suits its
// size; "-" when it was not measured (zero).
func fmtMS(d time.Duration) string {
	if d <= 0 {
		return "-"
	}
	m := ms(d)
	switch {
	case m < 0.1:
		return strconv.FormatFloat(m, 'f', 3, 64)
	case m < 10:
		return strconv.FormatFloat(m, 'f', 2, 64)
	case m < 100:
		return strconv.FormatFloat(m, 'f', 1, 64)
	}
	return strconv.FormatFloat(m, 'f', 0, 64)
}

// fmtRange formats a latency range "lo-hi", or one figure when they are
// equal.
func fmtRange(lo, hi time.Duration) string {
	if lo <= 0 || lo == hi {
		return fmtMS(hi)
	}
	return fmtMS(lo) + "-" + fmtMS(hi)
}

// fmtRate formats a rate per second: with thousands separators from 100
// up, one decimal below; "-" for zero.
func fmtRate(f float64) string {
	switch {
	case f <= 0:
		return "-"
	case f < 100:
		return strconv.FormatFloat(f, 'f', 1, 64)
	}
	return fmtInt(int64(f + 0.5))
}

// fmtInt formats n with thousands separators.
func fmtInt(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// fmtBytes formats a memory size in binary units; "-" when unknown
// (negative).
func fmtBytes(n float64) string {
	switch {
	case n < 0:
		return "-"
	case n < 1024:
		return fmt.Sprintf("%.0f B", n)
	case n < 1024*1024:
		return fmt.Sprintf("%.1f KiB", n/1024)
	case n < 1024*1024*1024:
		return fmt.Sprintf("%.1f MiB", n/1024/1024)
	}
	return fmt.Sprintf("%.2f GiB", n/1024/1024/1024)
}

// clientsLabel names a result's concurrency for tables and charts.
func clientsLabel(n int) string {
	if n == 1 {
		return "1 client"
	}
	return fmtInt(int64(n)) + " clients"
}
