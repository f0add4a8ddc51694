package harness

import (
	"context"
	"os"
	"sync"
	"time"

	"github.com/leasehold-go/leasehold/internal/testserver"
)

// The harness's processes (holders, leasehold run processes, store
// servers) are testserver.Process values: each in its own process group,
// so that a signal reaches it and everything it started, killed with its
// whole group, and SIGKILLed if the harness dies.

// startProc launches argv as a process named name, with env added to its
// environment and its output appended to the file log, without waiting
// for it to be ready.
func startProc(name string, argv, env []string, log string) (*testserver.Process, error) {
	p := testserver.NewProcess(testserver.Spec{Name: name, Path: argv[0], Args: argv[1:], Env: env, Log: log})
	if err := p.Launch(); err != nil {
		return nil, err
	}
	return p, nil
}

// procSet is a set of processes killed together at the end of a run.
type procSet struct {
	mu sync.Mutex
	ps []*testserver.Process
}

// add remembers p for killAll.
func (s *procSet) add(p *testserver.Process) {
	s.mu.Lock()
	s.ps = append(s.ps, p)
	s.mu.Unlock()
}

// killAll kills every process added, at once.
func (s *procSet) killAll() {
	s.mu.Lock()
	ps := s.ps
	s.ps = nil
	s.mu.Unlock()
	testserver.KillAll(ps...)
}

// waitExit waits until p has exited (true) or ctx ends (false).
func waitExit(ctx context.Context, p *testserver.Process) bool {
	for p.Running() {
		select {
		case <-ctx.Done():
			return false
		case <-time.After(20 * time.Millisecond):
		}
	}
	return true
}

// tail returns the end of a log file, short enough for a run's notes.
func tail(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	if len(b) > 600 {
		b = b[len(b)-600:]
	}
	return string(b)
}
