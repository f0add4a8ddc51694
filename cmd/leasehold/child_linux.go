package main

import (
	"errors"
	"runtime"
	"syscall"

	"golang.org/x/sys/unix"
)

// cldStopped is the si_code of a child stopped by a signal (CLD_STOPPED).
const cldStopped = 5

// setParentDeath has the kernel SIGKILL the command when leasehold dies.
// It reaches the command itself, not the rest of its process group; the
// watchdog covers those.
func setParentDeath(attr *syscall.SysProcAttr) {
	attr.Pdeathsig = syscall.SIGKILL
}

// startLocked starts cmd from an OS thread that stays locked until exited
// is closed: the parent-death signal fires when the thread that forked the
// command exits, not the process, and the Go runtime ends a thread whose
// locked goroutine returns.
func startLocked(cmd interface{ Start() error }, exited <-chan struct{}) error {
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		err := cmd.Start()
		errc <- err
		if err == nil {
			<-exited
		}
		runtime.UnlockOSThread()
	}()
	return <-errc
}

// watch waits for the command to exit (without reaping it) and reports
// its stops.
func (c *child) watch() {
	defer close(c.exited)
	flags := unix.WEXITED | unix.WNOWAIT
	if c.tty >= 0 {
		flags |= unix.WSTOPPED
	}
	for {
		var info unix.Siginfo
		err := unix.Waitid(unix.P_PID, c.pid, &info, flags, nil)
		switch {
		case errors.Is(err, unix.EINTR):
			continue
		case err != nil:
			return
		case info.Code == cldStopped:
			// Consume the stop, so that the next wait reports the next
			// event, and tell run.
			var done unix.Siginfo
			_ = unix.Waitid(unix.P_PID, c.pid, &done, unix.WSTOPPED|unix.WNOHANG, nil)
			c.stopped <- struct{}{}
			continue
		}
		return
	}
}
