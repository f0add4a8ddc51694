package testserver

import (
	"bytes"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// sigkill sends SIGKILL to process group pgid, and SIGCONT so that a
// stopped member is woken to die.
func sigkill(pgid int) {
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
	_ = syscall.Kill(-pgid, syscall.SIGCONT)
}

// killGroup SIGKILLs process group pgid until none of its members is alive
// (zombies aside), for up to limit. One signal to a group can miss a child
// forked while it was delivered (a PostgreSQL backend starting as the
// postmaster is killed): such a child outlives the kill and holds the
// server's shared memory, so that a restart fails. Without /proc (not
// Linux) it sends one SIGKILL.
func killGroup(pgid int, limit time.Duration) {
	sigkill(pgid)
	for end := time.Now().Add(limit); GroupAlive(pgid) && time.Now().Before(end); {
		time.Sleep(10 * time.Millisecond)
		sigkill(pgid)
	}
}

// GroupAlive reports whether a process of group pgid is alive and not a
// zombie, as /proc shows it.
func GroupAlive(pgid int) bool {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return false
	}
	want := strconv.Itoa(pgid)
	for _, e := range ents {
		if e.Name()[0] < '0' || e.Name()[0] > '9' {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue // exited meanwhile
		}
		// pid (comm) state ppid pgrp ...; comm may hold spaces and ')'.
		i := bytes.LastIndexByte(b, ')')
		if i < 0 || i+2 > len(b) {
			continue
		}
		f := strings.Fields(string(b[i+2:]))
		if len(f) >= 3 && f[2] == want && f[0] != "Z" && f[0] != "X" {
			return true
		}
	}
	return false
}
