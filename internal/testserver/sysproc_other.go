//go:build !linux

package testserver

import "syscall"

// sysProcAttr puts the child in its own process group, as user if not nil.
// Only Linux has a parent-death signal: elsewhere a test binary that
// crashes leaves its servers running.
func sysProcAttr(user *syscall.Credential) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Credential: user}
}
