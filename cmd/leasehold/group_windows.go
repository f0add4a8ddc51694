package main

import (
	"os"
	"syscall"
)

// ownGroup is the process attributes of a process in a group of its own.
func ownGroup() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{CreationFlags: syscall.CREATE_NEW_PROCESS_GROUP}
}

// killGroup ends the process pgid (Windows has no process groups to
// signal): any signal terminates it.
func killGroup(pgid int, _ syscall.Signal) {
	if p, err := os.FindProcess(pgid); err == nil {
		_ = p.Kill()
	}
}

// ignoreTerminalStops does nothing: there are no terminal stops here.
func ignoreTerminalStops() {}
