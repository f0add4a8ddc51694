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
	alive := false
	eachMember(pgid, func(pid, state string) bool {
		alive = state != "Z" && state != "X"
		return !alive
	})
	return alive
}

// groupStopped reports whether every thread of every live member of group
// pgid is stopped (state T or t), as /proc shows it. SIGSTOP is delivered
// to each thread on its own way back to user space, so a thread busy on
// another core can still answer a request after kill(2) returned.
func groupStopped(pgid int) bool {
	stopped := true
	eachMember(pgid, func(pid, state string) bool {
		if state == "Z" || state == "X" {
			return true
		}
		tasks, err := os.ReadDir("/proc/" + pid + "/task")
		if err != nil {
			return true // exited meanwhile
		}
		for _, t := range tasks {
			if st, ok := procState("/proc/" + pid + "/task/" + t.Name() + "/stat"); ok && st != "T" && st != "t" && st != "Z" && st != "X" {
				stopped = false
				return false
			}
		}
		return true
	})
	return stopped
}

// eachMember calls fn with the pid and state of each process of group pgid
// until fn returns false. Without /proc it calls fn for none.
func eachMember(pgid int, fn func(pid, state string) bool) {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return
	}
	want := strconv.Itoa(pgid)
	for _, e := range ents {
		if e.Name()[0] < '0' || e.Name()[0] > '9' {
			continue
		}
		f, ok := procStat("/proc/" + e.Name() + "/stat")
		if ok && len(f) >= 3 && f[2] == want && !fn(e.Name(), f[0]) {
			return
		}
	}
}

// procState returns the state field of a /proc stat file.
func procState(path string) (string, bool) {
	f, ok := procStat(path)
	if !ok || len(f) == 0 {
		return "", false
	}
	return f[0], true
}

// procStat returns the fields of a /proc stat file after the command name:
// state ppid pgrp ...; the name may hold spaces and ')'.
func procStat(path string) ([]string, bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, false // exited meanwhile
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 || i+2 > len(b) {
		return nil, false
	}
	return strings.Fields(string(b[i+2:])), true
}
