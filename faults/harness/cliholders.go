package harness

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/leasehold-go/leasehold/internal/testserver"

	"github.com/leasehold-go/leasehold/faults/history"
)

// keep runs slot s's leasehold run, again each time it exits, until ctx
// ends; then it kills the last one.
func (r *cliRun) keep(ctx context.Context, s *cliSlot) {
	for ctx.Err() == nil {
		p, err := r.spawn(s)
		if err != nil {
			r.rec.Record(history.Event{Kind: history.EvMark, Target: fmt.Sprintf("slot%d", s.idx), Err: err.Error()})
			sleepCtx(ctx, r.cfg.TTL)
			continue
		}
		if !waitExit(ctx, p) {
			p.Kill()
			continue
		}
		r.rec.Record(history.Event{Kind: history.EvMark, Target: p.Name(), Note: "leasehold exited"})
		sleepCtx(ctx, time.Duration(s.rng.Int64N(int64(r.cfg.TTL/10)+1)))
	}
}

// spawn starts the next generation of slot s.
func (r *cliRun) spawn(s *cliSlot) (*testserver.Process, error) {
	s.mu.Lock()
	s.gen++
	id := fmt.Sprintf("c%d.%d", s.idx, s.gen)
	s.child = id
	s.mu.Unlock()
	eps := make([]string, len(s.proxies))
	for i, p := range s.proxies {
		eps[i] = p.Addr()
	}
	url := r.url
	if len(eps) > 0 {
		url = r.cfg.Backend.URL(eps)
	}
	T := r.cfg.TTL
	child := CLIChildConfig{ID: id, Resource: r.res.URL(), History: filepath.Join(r.cfg.Dir, "cli-"+id+".jsonl"),
		Work: T / 5, Ops: 20 + int(s.rng.Int64N(10))} // 4-6 x TTL: it outlasts a fault that hits it early
	argv := []string{r.cfg.Leasehold, "run", "--key", cliKey, "--ttl", T.String(), "--wait", "1h", "--label", fmt.Sprintf("slot%d", s.idx), "--store", url, "--"}
	argv = append(append(argv, r.cfg.ChildCmd...), child.Args()...)
	p, err := startProc(id, argv, r.cfg.Env, filepath.Join(r.cfg.Dir, fmt.Sprintf("log-slot%d.txt", s.idx)))
	if err != nil {
		return nil, err
	}
	r.procs.add(p)
	s.mu.Lock()
	s.proc = p
	s.mu.Unlock()
	return p, nil
}

// holder waits until some slot's command holds the key and has written,
// and returns the slot and its command's id.
func (r *cliRun) holder() (*cliSlot, string, error) {
	limit := 20*r.cfg.TTL + 10*time.Second
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) && r.ctx.Err() == nil {
		ctx, cancel := context.WithTimeout(r.ctx, r.cfg.TTL)
		h, err := r.store.Holder(ctx, cliKey)
		cancel()
		if err == nil {
			var idx int
			if _, err := fmt.Sscanf(h.Label, "slot%d", &idx); err == nil && idx < len(r.slots) {
				s := r.slots[idx]
				s.mu.Lock()
				id, p := s.child, s.proc
				s.mu.Unlock()
				if p != nil && p.Running() && r.wrote(id) {
					return s, id, nil
				}
			}
		}
		sleepCtx(r.ctx, 20*time.Millisecond)
	}
	return nil, "", fmt.Errorf("no command held the key and wrote within %s (see %s)", limit, r.cfg.Dir)
}

// wrote reports whether command id has made a write the resource saw.
func (r *cliRun) wrote(id string) bool {
	for _, e := range r.rec.Events() {
		if (e.Kind == history.EvAdmit || e.Kind == history.EvFenced) && e.Target == id {
			return true
		}
	}
	return false
}

// stopped reports whether command id is gone without having finished its
// writes (from its history): something killed it.
func (r *cliRun) stopped(id string) bool {
	evs, _ := history.ReadFile(filepath.Join(r.cfg.Dir, "cli-"+id+".jsonl"))
	pid := 0
	for _, e := range evs {
		switch e.Kind {
		case history.EvReleased:
			return false
		case history.EvStart:
			pid, _ = strconv.Atoi(strings.TrimPrefix(e.Note, "pid="))
		}
	}
	return pid > 0 && procGone(pid)
}

// procGone reports whether process pid has exited: it is gone, or a zombie
// (an orphan waits for whoever reaps orphans here, which may be slow).
func procGone(pid int) bool {
	if errors.Is(syscall.Kill(pid, 0), syscall.ESRCH) {
		return true
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	// pid (comm) state ...: the state follows the last ')'.
	i := strings.LastIndexByte(string(b), ')')
	return i >= 0 && i+2 < len(b) && b[i+2] == 'Z'
}

// waitChildrenGone waits (up to 10 s) until no command process is left.
func (r *cliRun) waitChildrenGone() {
	hist, _ := filepath.Glob(filepath.Join(r.cfg.Dir, "cli-*.jsonl"))
	var pids []int
	for _, f := range hist {
		evs, _ := history.ReadFile(f)
		for _, e := range evs {
			if e.Kind == history.EvStart {
				if pid, err := strconv.Atoi(strings.TrimPrefix(e.Note, "pid=")); err == nil {
					pids = append(pids, pid)
				}
			}
		}
	}
	end := time.Now().Add(10 * time.Second)
	for _, pid := range pids {
		for !procGone(pid) && time.Now().Before(end) {
			time.Sleep(10 * time.Millisecond)
		}
	}
}
