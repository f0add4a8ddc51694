package harness

import (
	"context"
	"database/sql"
	"fmt"
	"syscall"
	"time"

	"github.com/leasehold-go/leasehold/faults/check"
	"github.com/leasehold-go/leasehold/faults/history"
)

// episode injects one fault on the current holder; it reports whether the
// holder's command was stopped before finishing (the fault bit).
func (r *cliRun) episode(c string) (bool, error) {
	T := r.cfg.TTL
	s, id, err := r.holder()
	if err != nil {
		return false, err
	}
	s.mu.Lock()
	p := s.proc
	s.mu.Unlock()
	r.logf("  %s %s (%s)", c, check.Describe(c), id)
	fault := func(phase, note string) {
		r.rec.Record(history.Event{Kind: history.EvFault, Fault: c, Phase: phase, Target: id, Note: note})
	}
	switch c {
	case check.C1:
		f := 1.5 + r.rng.Float64()
		fault("on", fmt.Sprintf("SIGSTOP %.2f x TTL", f))
		_ = p.Signal(syscall.SIGSTOP)
		sleepCtx(r.ctx, time.Duration(f*float64(T)))
		_ = p.Signal(syscall.SIGCONT)
		fault("off", "SIGCONT")
	case check.C2:
		fault("on", "SIGKILL")
		p.Kill()
		fault("off", "")
	case check.C3:
		fault("on", "stall")
		release, err := r.stall(s)
		if err != nil {
			return false, err
		}
		sleepCtx(r.ctx, 2*T)
		release()
		fault("off", "")
	}
	// Let the next holder take over and write.
	sleepCtx(r.ctx, 2*T)
	return r.stopped(id), nil
}

// stall makes slot s's renewals stall until the returned function is
// called: its proxies black-hole the traffic, or, on the embedded store,
// the harness holds the database's write lock.
func (r *cliRun) stall(s *cliSlot) (func(), error) {
	if len(s.proxies) > 0 {
		for _, p := range s.proxies {
			p.Partition()
		}
		return func() {
			for _, p := range s.proxies {
				p.Heal()
			}
		}, nil
	}
	sq, ok := r.cfg.Backend.(*SQLite)
	if !ok {
		return nil, fmt.Errorf("no way to stall the %s store", r.cfg.Backend.Name())
	}
	db, err := sql.Open("sqlite", sq.path)
	if err != nil {
		return nil, err
	}
	conn, err := db.Conn(r.ctx)
	if err == nil {
		_, err = conn.ExecContext(r.ctx, "PRAGMA busy_timeout = 10000")
	}
	if err == nil {
		_, err = conn.ExecContext(r.ctx, "BEGIN IMMEDIATE")
	}
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("take the write lock of %s: %w", sq.path, err)
	}
	return func() {
		_, _ = conn.ExecContext(context.Background(), "ROLLBACK")
		conn.Close()
		db.Close()
	}, nil
}
