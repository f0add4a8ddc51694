package main

import "os"

// processGone reports whether no process pid exists on this host.
func processGone(pid int) bool {
	p, err := os.FindProcess(pid) // opens the process: fails once it is gone
	if err != nil {
		return true
	}
	p.Release()
	return false
}
