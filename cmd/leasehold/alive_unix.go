//go:build unix

package main

import (
	"errors"
	"syscall"
)

// processGone reports whether no process pid exists on this host. A process
// that exists but is not ours to signal (EPERM) is not gone.
func processGone(pid int) bool {
	return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
}
