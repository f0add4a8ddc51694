package main

import (
	"fmt"
	"os"
	"os/exec"
	"syscall"
)

// child is the command. Windows has no process groups or signals as run
// uses them: SIGINT, SIGTERM and SIGKILL all end the command itself (its
// own children are not reached), and it cannot be suspended.
type child struct {
	cmd     *exec.Cmd
	pid     int
	exited  chan struct{}
	stopped chan struct{}
	err     error
}

// startGroup starts cmd.
func startGroup(cmd *exec.Cmd, _ int) (*child, error) {
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("cannot start the command: %w", err)
	}
	c := &child{cmd: cmd, pid: cmd.Process.Pid, exited: make(chan struct{}), stopped: make(chan struct{})}
	go func() {
		c.err = cmd.Wait()
		close(c.exited)
	}()
	return c, nil
}

// foregroundTTY returns -1: there is no terminal hand-over here.
func foregroundTTY(...*os.File) int { return -1 }

// suspend does nothing (stopped never receives).
func (c *child) suspend() {}

// signal ends the command for any signal.
func (c *child) signal(syscall.Signal) {
	_ = c.cmd.Process.Kill()
}

// wait returns the command's exit status.
func (c *child) wait() int {
	<-c.exited
	return c.cmd.ProcessState.ExitCode()
}
