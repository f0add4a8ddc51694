//go:build unix

package main

import (
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"syscall"

	"golang.org/x/sys/unix"
)

// child is a command running as the leader of its own process group.
type child struct {
	cmd *exec.Cmd
	pid int
	// tty is the controlling terminal when the command was started in its
	// foreground (leasehold itself was in the foreground), else -1.
	tty int
	// exited is closed when the command has exited. The process is not
	// reaped until wait, so its pid, which is the group's id, stays
	// reserved and signalling the group never reaches a stranger.
	exited chan struct{}
	// stopped receives when the command is stopped (Ctrl-Z at the
	// terminal); only in terminal mode.
	stopped chan struct{}
}

// startGroup starts cmd in a new process group. When tty is a terminal
// whose foreground group is leasehold's, the command's group becomes the
// foreground group instead, so that the command can read the terminal and
// Ctrl-C and Ctrl-Z reach it as they would without leasehold.
func startGroup(cmd *exec.Cmd, tty int) (*child, error) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	setParentDeath(cmd.SysProcAttr)
	if tty >= 0 {
		// In the background, leasehold must still be able to write its
		// messages and to take the terminal back.
		signal.Ignore(syscall.SIGTTOU)
		cmd.SysProcAttr.Foreground = true
		cmd.SysProcAttr.Ctty = tty
	}
	c := &child{cmd: cmd, tty: tty, exited: make(chan struct{}), stopped: make(chan struct{})}
	if err := startLocked(cmd, c.exited); err != nil {
		return nil, fmt.Errorf("cannot start the command: %w", err)
	}
	c.pid = cmd.Process.Pid
	go c.watch()
	return c, nil
}

// foregroundTTY returns the first of files that is leasehold's controlling
// terminal with leasehold's process group in its foreground, or -1.
func foregroundTTY(files ...*os.File) int {
	for _, f := range files {
		if f == nil {
			continue
		}
		fd := int(f.Fd())
		if pg, err := unix.IoctlGetInt(fd, unix.TIOCGPGRP); err == nil && pg == unix.Getpgrp() {
			return fd
		}
	}
	return -1
}

// suspend handles a stop of the command at the terminal: it takes the
// terminal back and stops leasehold's own group, so that the shell sees its
// job stopped. When continued, it gives the terminal back to the command (if
// leasehold is in the foreground again) and continues it.
func (c *child) suspend() {
	me := unix.Getpgrp()
	cont := make(chan os.Signal, 1)
	signal.Notify(cont, syscall.SIGCONT)
	defer signal.Stop(cont)
	_ = unix.IoctlSetPointerInt(c.tty, unix.TIOCSPGRP, me)
	// The stop may take effect after kill returns (another thread takes
	// the signal): wait for the SIGCONT that ends it.
	_ = syscall.Kill(0, syscall.SIGSTOP)
	<-cont
	if pg, err := unix.IoctlGetInt(c.tty, unix.TIOCGPGRP); err == nil && pg == me {
		_ = unix.IoctlSetPointerInt(c.tty, unix.TIOCSPGRP, c.pid)
	}
	c.signal(syscall.SIGCONT)
}

// signal sends s to the command's process group.
func (c *child) signal(s syscall.Signal) {
	_ = syscall.Kill(-c.pid, s)
}

// wait reaps the command and returns its exit status, 128+N when signal N
// ended it. In terminal mode it first takes the terminal back.
func (c *child) wait() int {
	<-c.exited
	if c.tty >= 0 {
		if pg, err := unix.IoctlGetInt(c.tty, unix.TIOCGPGRP); err == nil && pg == c.pid {
			_ = unix.IoctlSetPointerInt(c.tty, unix.TIOCSPGRP, unix.Getpgrp())
		}
	}
	_ = c.cmd.Wait()
	st, ok := c.cmd.ProcessState.Sys().(syscall.WaitStatus)
	switch {
	case !ok:
		return c.cmd.ProcessState.ExitCode()
	case st.Signaled():
		return 128 + int(st.Signal())
	}
	return st.ExitStatus()
}
