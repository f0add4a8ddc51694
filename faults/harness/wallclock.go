package harness

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/leasehold-go/leasehold/faults/check"
	"github.com/leasehold-go/leasehold/faults/clock"
	"github.com/leasehold-go/leasehold/faults/history"
)

// F17 steps the wall clock of one holder process, alone, while its
// monotonic clock runs on: the client promises to judge its deadlines by
// the monotonic clock, and every store's code in the holder process
// (expiries it computes, times it sends, token floors) must not misbehave
// when time.Now's wall reading jumps. The holder is the usual one built
// with a patched time package (clock.BuildShifted, RunConfig.WallHolderCmd);
// it reports the offset its time.Now runs with (clock.Observed) at start and
// at every change, and the harness waits for that report after each step,
// so an episode whose step did not reach the holder fails the run.

// wallMark is the note of a holder's report of its wall-clock offset.
const wallMark = "wallshift="

// wallNote is the part of a holder's start note that reports its wall
// offset: empty unless it runs with an offset file (F17's holder).
func wallNote() string {
	if os.Getenv(clock.GoShiftEnv) == "" {
		return ""
	}
	return " " + wallMark + clock.Observed().String()
}

// watchWall records the holder's wall offset each time it changes, until
// ctx ends; it does nothing unless the holder runs with an offset file.
func watchWall(ctx context.Context, rec history.Recorder, every time.Duration) {
	if os.Getenv(clock.GoShiftEnv) == "" {
		return
	}
	last := clock.Observed()
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if d := clock.Observed(); d != last {
			last = d
			rec.Record(history.Event{Kind: history.EvMark, Note: wallMark + d.String()})
		}
	}
}

// wallShifter applies F17 where the harness has the holder built with the
// patched time package.
// On the embedded store the holder's wall clock is the store's clock (its
// expiries are the host's wall time, sqlite/doc.go), so the step moves the
// store's clock for that process alone: a note says so.
func wallShifter(h *harness) (bool, string) {
	if len(h.cfg.WallHolderCmd) == 0 {
		return false, "no holder built with the patched time package (RunConfig.WallHolderCmd; faults run and suite build one)"
	}
	if len(h.cfg.Backend.Endpoints()) == 0 {
		return true, "F17 on the embedded store: its expiries are the host's wall time (sqlite/doc.go), so stepping one process's wall clock steps the store's clock as that process reads it: concurrent holders are expected (the stepped holder takes keys whose expiry is past by its clock, and writes expiries others read as past), and the tokens must still fence them"
	}
	return true, ""
}

// stepHolderWall is F17: the extra holder, with a wall-clock offset file,
// is stepped 3-5 x TTL forward while it holds a key, 2 x TTL later as far
// back (behind real time), 2 x TTL later to real time again.
func (h *harness) stepHolderWall() error {
	T := h.cfg.TTL
	x := h.extra
	x.rate, x.long, x.shift = 1, true, filepath.Join(h.cfg.Dir, "wallshift")
	if err := clock.WriteShift(x.shift, 0); err != nil {
		return err
	}
	if err := h.spawn(x); err != nil {
		return err
	}
	defer h.halt(x)
	if err := h.awaitWall(x.id, 0); err != nil {
		return err
	}
	s := h.reader([]*slot{x}, 20*T+5*time.Second)
	if s == nil {
		h.remark("F17: in some episodes the wall-stepped holder never got a key")
		return nil
	}
	d := (3*T + time.Duration(h.rng.Int64N(int64(2*T)+1))).Round(time.Millisecond)
	h.fault(check.F17, s.id, "on", fmt.Sprintf("wall clock +%s, then -%s, then 0", d, d))
	from := history.Mono()
	for i, off := range []time.Duration{d, -d, 0} {
		if err := clock.WriteShift(x.shift, off); err != nil {
			return err
		}
		if err := h.awaitWall(s.id, off); err != nil {
			return err
		}
		h.rec.Record(history.Event{Kind: history.EvMark, Target: s.id, Note: "F17 wall clock " + off.String()})
		if i < 2 {
			h.sleep(2 * T)
		}
	}
	if n := h.storeCalls(s.id, from, history.Mono()); n == 0 {
		h.remark("F17: in some episodes the stepped holder made no successful store call while its clock was off")
	}
	h.fault(check.F17, s.id, "off", "")
	h.sleep(T)
	h.halt(x)
	h.sleep(h.ttlx(1.5))
	return nil
}

// awaitWall waits until holder id reports that its time.Now runs off by
// off (at start, or after a step), from its history file: proof that the
// step reached the process. It fails the run if that does not come within
// 5 s + TTL, naming the offset the holder last reported.
func (h *harness) awaitWall(id string, off time.Duration) error {
	path := filepath.Join(h.cfg.Dir, "hist-"+id+".jsonl")
	want := wallMark + off.String()
	deadline := time.Now().Add(5*time.Second + h.cfg.TTL)
	last := "none"
	for {
		evs, _ := history.ReadFile(path) // a line being written is read next time
		for _, e := range evs {
			for _, f := range strings.Fields(e.Note) {
				if strings.HasPrefix(f, wallMark) {
					last = f
				}
			}
		}
		if last == want {
			return nil
		}
		if time.Now().After(deadline) || h.ctx.Err() != nil {
			return fmt.Errorf("F17: holder %s did not report a wall clock off by %s within %s (its last report: %s): the step did not reach it; is %v built with the patched time package (clock.BuildShifted)?",
				id, off, 5*time.Second+h.cfg.TTL, last, h.cfg.WallHolderCmd)
		}
		h.sleep(20 * time.Millisecond)
	}
}

// judgeWallStep adds a missed target for concurrent holders under F17 on
// a networked store: there the store's clock is the server's and the
// client judges its deadlines by the monotonic clock, so a step of the
// holder's wall clock must not let two holders hold a key. (On the
// embedded store the holder's wall clock is the store's clock: see
// wallShifter.)
func (h *harness) judgeWallStep(r *check.RunResult) {
	if n := r.Metrics.DoubleByFault[check.F17]; n > 0 && len(h.cfg.Backend.Endpoints()) > 0 {
		r.Missed = append(r.Missed, fmt.Sprintf("concurrent holders under the holder's wall-clock step (F17): %d", n))
	}
}

// storeCalls counts holder id's successful acquires and renewals that
// were sent between the monotonic times from and to: the store calls its
// stepped wall clock could affect.
func (h *harness) storeCalls(id string, from, to int64) int {
	evs, _ := history.ReadFile(filepath.Join(h.cfg.Dir, "hist-"+id+".jsonl"))
	n := 0
	for _, e := range evs {
		if (e.Kind == history.EvStoreAcquire || e.Kind == history.EvStoreRenew) && e.Err == "" && e.T0 >= from && e.T0 <= to {
			n++
		}
	}
	return n
}
