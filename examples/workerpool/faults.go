package main

import (
	"context"
	"fmt"
	"syscall"
	"time"
)

// fault is one injected failure: a kill at hold-work or hold-ack, or a
// pause at stall (see hooks.go for the points).
type fault struct {
	point  string // pointHoldWork, pointHoldAck or pointStall
	after  int    // armed once this many rows are acked
	target *proc  // the worker it is armed on
	fired  bool   // the target reached the point
	msg    string // the message it fired on
	token  uint64 // the target's lease token then
	// A pause: resumed once another worker has applied the message's
	// effect; outcome is then what became of the stalled write.
	resumed bool
	outcome string
	done    bool
}

func (f *fault) String() string {
	s := f.point
	if f.target != nil {
		s += " on " + f.target.name
	}
	switch {
	case f.done && f.outcome != "":
		return s + fmt.Sprintf(" (%s, token %d): stalled write %s", f.msg, f.token, f.outcome)
	case f.done:
		return s + fmt.Sprintf(" (%s, token %d): done", f.msg, f.token)
	case f.resumed:
		return s + fmt.Sprintf(" (%s, token %d): resumed, stalled write pending", f.msg, f.token)
	case f.fired:
		return s + fmt.Sprintf(" (%s, token %d): waiting for another worker to take the message over", f.msg, f.token)
	case f.target != nil:
		return s + ": armed, not reached"
	}
	return s + fmt.Sprintf(": not armed (arms after %d acked rows)", f.after)
}

// planFaults spreads the kills (alternately at hold-work and hold-ack) and
// the pauses over the first half of the run, by acked rows.
func planFaults(kills, pauses, rows int) []*fault {
	var fs []*fault
	for i := range max(kills, pauses) {
		if i < kills {
			point := pointHoldWork
			if i%2 == 1 {
				point = pointHoldAck
			}
			fs = append(fs, &fault{point: point})
		}
		if i < pauses {
			fs = append(fs, &fault{point: pointStall})
		}
	}
	for j, f := range fs {
		f.after = (j + 1) * rows / (2 * (len(fs) + 1))
	}
	return fs
}

// advanceFaults arms the faults whose time has come, on a free worker, and
// resumes the paused workers whose message another worker has applied.
func (d *driver) advanceFaults(ctx context.Context, acked int) error {
	for _, f := range d.faults {
		switch {
		case f.target == nil && acked >= f.after:
			p := d.freeWorker()
			if p == nil {
				continue
			}
			if err := p.send("arm " + f.point); err != nil {
				return fmt.Errorf("arming %s on %s: %w", f.point, p.name, err)
			}
			f.target = p
			d.logf("armed %s on %s after %d acked rows", f.point, p.name, acked)
		case f.point == pointStall && f.fired && !f.resumed:
			var applied int
			err := d.db.QueryRowContext(ctx, `SELECT applied FROM `+d.t.effects()+` WHERE msg_id = $1`, f.msg).Scan(&applied)
			if err != nil {
				return fmt.Errorf("pause of %s: %w", f.target.name, err)
			}
			if applied == 0 {
				continue
			}
			if err := f.target.signal(syscall.SIGCONT); err != nil {
				return fmt.Errorf("resuming %s: %w", f.target.name, err)
			}
			f.resumed, f.target.paused = true, false
			d.pauses++
			d.logf("resumed %s: %s was taken over and applied; its write with token %d goes out now", f.target.name, f.msg, f.token)
		}
	}
	return nil
}

// freeWorker returns a running worker that is not the target of an
// unfinished fault and not busy with a message slower than the visibility
// timeout, or nil.
func (d *driver) freeWorker() *proc {
	taken := map[*proc]bool{}
	for _, f := range d.faults {
		if f.target != nil && !f.done {
			taken[f.target] = true
		}
	}
	for _, p := range d.procs {
		if p.alive() && !p.killed && !p.paused && !taken[p] && d.busy[p] < d.cfg.VT {
			return p
		}
	}
	return nil
}

// fired handles a worker that reached an armed point: a kill point gets a
// SIGKILL and a replacement worker; the stall point a SIGSTOP, then "go",
// which the worker reads once it is resumed.
func (d *driver) fired(l line) error {
	p := l.p
	point := pointStall
	if l.f[0] == "held" {
		point = l.f[len(l.f)-1]
	}
	var f *fault
	for _, g := range d.faults {
		if g.target == p && g.point == point && !g.fired {
			f = g
		}
	}
	if f == nil {
		return fmt.Errorf("worker %s reached %s, which the driver did not arm", p.name, point)
	}
	f.fired, f.msg = true, l.f[1]
	fmt.Sscan(l.f[3], &f.token)
	if point == pointStall {
		if err := p.signal(syscall.SIGSTOP); err != nil {
			return err
		}
		p.paused = true
		d.logf("paused %s at %s (%s, token %d): its lease ends while it is stopped", p.name, time.Now().Format("15:04:05.000"), f.msg, f.token)
		return p.send("go")
	}
	if err := p.kill(); err != nil {
		return err
	}
	f.done = true
	d.kills++
	d.logf("killed %s at %s (%s, token %d)", p.name, point, f.msg, f.token)
	return d.startWorker()
}

// stalledOutcome records what became of a resumed worker's stalled write.
func (d *driver) stalledOutcome(p *proc, kind, msg string) {
	for _, f := range d.faults {
		if f.target == p && f.point == pointStall && f.resumed && !f.done && f.msg == msg {
			f.outcome, f.done = kind, true
			d.stalled = append(d.stalled, kind)
			if kind == "processed" {
				d.staleLanded++
			}
			d.logf("%s's stalled write of %s (token %d): %s", p.name, msg, f.token, kind)
			if kind == "error" {
				d.logf("%s's log ends:\n%s", p.name, p.logTail())
			}
		}
	}
}
