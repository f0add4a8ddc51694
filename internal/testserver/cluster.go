package testserver

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// What the launchers of several processes (etcd, ZooKeeper, Consul) share.

// startAttempts calls start up to three times, each with a new subfolder
// of dir, so that ports another process took meanwhile are retried with
// new ones. When dir is "", it makes a temporary folder named by prefix
// and returns it as rm, for the caller to remove when the servers stop; a
// failed start removes it.
func startAttempts(dir, prefix string, start func(dir string) error) (rm string, err error) {
	if dir == "" {
		if dir, err = os.MkdirTemp("", prefix); err != nil {
			return "", err
		}
		rm = dir
	}
	for attempt := range 3 {
		if err = start(filepath.Join(dir, fmt.Sprint(attempt))); err == nil {
			return rm, nil
		}
	}
	if rm != "" {
		_ = os.RemoveAll(rm)
	}
	return "", err
}

// logsOf returns the tail of each process's log, for failure messages.
func logsOf(ps []*Process) string {
	var b strings.Builder
	for _, p := range ps {
		b.WriteString(p.Log())
	}
	return b.String()
}

// pidsOf returns the process ids of the running processes.
func pidsOf(ps []*Process) []int {
	var pids []int
	for _, p := range ps {
		if pid := p.Pid(); pid != 0 {
			pids = append(pids, pid)
		}
	}
	return pids
}
