package main

import (
	"errors"
	"os"
	"syscall"
)

// errInvalidParameter is Windows' ERROR_INVALID_PARAMETER, what
// OpenProcess says of a pid that names no process.
const errInvalidParameter = syscall.Errno(87)

// processGone reports whether no process pid exists on this host. Only
// "no such process" counts: a live process that this user may not open
// (another user's, an elevated one) fails with access denied and is not
// gone.
func processGone(pid int) bool {
	p, err := os.FindProcess(pid) // opens the process
	if err != nil {
		return errors.Is(err, errInvalidParameter)
	}
	p.Release()
	return false
}
