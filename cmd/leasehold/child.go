package main

import (
	"errors"
	"fmt"
	"os/exec"
	"syscall"

	"golang.org/x/sys/unix"
)

// child is a command running as the leader of its own process group.
type child struct {
	cmd *exec.Cmd
	pid int
	// exited is closed when the command has exited. The process is not
	// reaped until wait, so its pid, which is the group's id, stays
	// reserved and signalling the group never reaches a stranger.
	exited chan struct{}
}

// startGroup starts cmd in a new process group.
func startGroup(cmd *exec.Cmd) (*child, error) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("cannot start the command: %w", err)
	}
	c := &child{cmd: cmd, pid: cmd.Process.Pid, exited: make(chan struct{})}
	go func() {
		defer close(c.exited)
		var info unix.Siginfo
		for {
			err := unix.Waitid(unix.P_PID, c.pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
			if !errors.Is(err, unix.EINTR) {
				return
			}
		}
	}()
	return c, nil
}

// signal sends s to the command's process group.
func (c *child) signal(s syscall.Signal) {
	_ = syscall.Kill(-c.pid, s)
}

// wait reaps the command and returns its exit status, 128+N when signal N
// ended it.
func (c *child) wait() int {
	<-c.exited
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
