//go:build !linux

package main

import "time"

// watchdogNow is the clock that leasehold and its watchdog share, in
// nanoseconds: the wall clock (a step of it moves the watchdog's deadlines).
func watchdogNow() int64 { return time.Now().UnixNano() }
