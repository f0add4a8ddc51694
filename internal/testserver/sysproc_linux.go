package testserver

import "syscall"

// sysProcAttr puts the child in its own process group, as user if not nil,
// and has the kernel kill it if the thread that started it dies (the test
// binary crashing without its cleanups).
func sysProcAttr(user *syscall.Credential) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL, Credential: user}
}
