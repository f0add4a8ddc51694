//go:build unix && !linux

package main

import (
	"errors"
	"syscall"

	"golang.org/x/sys/unix"
)

// setParentDeath does nothing: there is no parent-death signal here, and
// the watchdog alone stops the command's group when leasehold dies.
func setParentDeath(*syscall.SysProcAttr) {}

// startLocked starts cmd.
func startLocked(cmd interface{ Start() error }, _ <-chan struct{}) error {
	return cmd.Start()
}

// watch waits for the command to exit, without reaping it, through a
// kqueue. Stops are not reported here (Ctrl-Z stops the command alone).
func (c *child) watch() {
	defer close(c.exited)
	kq, err := unix.Kqueue()
	if err != nil {
		return
	}
	defer unix.Close(kq)
	var ev unix.Kevent_t
	unix.SetKevent(&ev, c.pid, unix.EVFILT_PROC, unix.EV_ADD|unix.EV_ONESHOT)
	ev.Fflags = unix.NOTE_EXIT
	out := make([]unix.Kevent_t, 1)
	for {
		_, err := unix.Kevent(kq, []unix.Kevent_t{ev}, out, nil)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		return // exited, or gone already (ESRCH)
	}
}
