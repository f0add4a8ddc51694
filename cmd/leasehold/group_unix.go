//go:build unix

package main

import (
	"os/signal"
	"syscall"
)

// ownGroup is the process attributes of a process in a group of its own.
func ownGroup() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}

// killGroup sends s to the process group pgid.
func killGroup(pgid int, s syscall.Signal) {
	_ = syscall.Kill(-pgid, s)
}

// ignoreTerminalStops keeps the watchdog, a background process group when
// leasehold runs in a terminal, from being stopped by a write to it.
func ignoreTerminalStops() {
	signal.Ignore(syscall.SIGTTOU)
}
