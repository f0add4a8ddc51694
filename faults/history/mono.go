package history

import (
	"time"

	"golang.org/x/sys/unix"
)

// Mono returns CLOCK_MONOTONIC in nanoseconds. On Linux that clock is the
// same for every process on the machine, so timestamps taken by the holder
// processes, the resource and the harness can be compared directly.
func Mono() int64 {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts); err != nil {
		panic("history: clock_gettime(CLOCK_MONOTONIC): " + err.Error())
	}
	return ts.Nano()
}

// Since returns the time elapsed since the monotonic timestamp t.
func Since(t int64) time.Duration { return time.Duration(Mono() - t) }
