package main

import "golang.org/x/sys/unix"

// watchdogNow is the clock that leasehold and its watchdog share, in
// nanoseconds: CLOCK_BOOTTIME, which every process on the host reads alike
// and which, unlike CLOCK_MONOTONIC, goes on counting while the host is
// suspended, as the store's clock does.
func watchdogNow() int64 {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_BOOTTIME, &ts); err != nil {
		_ = unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts) // kernels before 2.6.39
	}
	return ts.Nano()
}
