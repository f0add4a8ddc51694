package faults

import (
	"fmt"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// episode injects one fault of class c and lets the system recover.
func (h *harness) episode(c string, pass int) error {
	h.reviveDead()
	T := h.cfg.TTL
	recover := h.ttlx(1.5)
	pick := func() (*slot, error) {
		s := h.reader(nil, 10*T+5*time.Second)
		if s == nil {
			return nil, fmt.Errorf("no holder read the counter for %s: the holders are not making progress (see %s)", 10*T+5*time.Second, h.cfg.Dir)
		}
		return s, nil
	}
	h.logf("  %s %s", c, FaultNames[c])
	switch c {
	case "F1", "F2":
		f, mustBite := 0.3, false
		if c == "F2" {
			f = 1 + 2*h.rng.Float64()
			if h.cfg.Mutation || h.longPause[pass] == false {
				// One pause per pass outlasts the store's takeover bound by
				// a TTL or more, so that another holder surely takes the key
				// and writes meanwhile: the fault must bite.
				h.longPause[pass] = true
				f = h.bound + 1 + 0.5*h.rng.Float64()
				mustBite = true
			}
		}
		// The long pause must bite: if the paused holder made no stale
		// write attempt (it had already written when the signal landed,
		// on a starved machine), it is paused again, at most twice more. (With
		// the fence disabled nothing is refused: the mutation run is judged
		// by the stale writes admitted instead.)
		for try := 0; ; try++ {
			s, err := pick()
			if err != nil {
				return err
			}
			on := Mono()
			_ = s.proc.Signal(syscall.SIGSTOP)
			h.fault(c, s.id, "on", fmt.Sprintf("SIGSTOP %.2f x TTL", f))
			h.sleep(h.ttlx(f))
			_ = s.proc.Signal(syscall.SIGCONT)
			h.fault(c, s.id, "off", "SIGCONT")
			h.sleep(recover)
			if !mustBite || h.cfg.Mutation || try == 2 || h.fencedSince(s.id, on) || h.ctx.Err() != nil {
				break
			}
			h.logf("  %s did not bite (no stale write from %s): pausing again", c, s.id)
		}
	case "F3":
		s, err := pick()
		if err != nil {
			return err
		}
		h.fault(c, s.id, "on", "SIGKILL")
		s.proc.Kill()
		h.fault(c, s.id, "off", "")
		if err := h.spawn(s); err != nil {
			return err
		}
		h.sleep(h.afterKill())
	case "F4", "F5", "F6", "F7", "F12":
		return h.netFault(c)
	case "F5c":
		return h.lateCleanup()
	case "F8":
		p := h.cfg.Backend.(StorePauser)
		h.fault(c, "store", "on", "SIGSTOP")
		if err := p.PauseStore(); err != nil {
			return err
		}
		h.sleep(2 * T)
		if err := p.ResumeStore(); err != nil {
			return err
		}
		h.fault(c, "store", "off", "SIGCONT")
		h.sleep(2 * T)
	case "F9", "F9b":
		r, ok := h.cfg.Backend.(StoreRestarter)
		if !ok {
			// The embedded store: kill every process using the file at once.
			var ids []string
			for _, s := range h.slots {
				ids = append(ids, s.id)
			}
			h.fault(c, strings.Join(ids, ","), "on", "SIGKILL of every holder")
			var ps []*Proc
			for _, s := range h.slots {
				ps = append(ps, s.proc)
			}
			KillProcs(ps...)
			h.fault(c, strings.Join(ids, ","), "off", "")
			for _, s := range h.slots {
				if err := h.spawn(s); err != nil {
					return err
				}
			}
			h.sleep(h.afterKill())
			return nil
		}
		h.fault(c, "store", "on", "SIGKILL")
		if err := r.KillStore(); err != nil {
			return err
		}
		h.sleep(T / 2)
		if err := r.RestartStore(h.ctx, c == "F9b"); err != nil {
			return fmt.Errorf("restart the store: %w", err)
		}
		h.fault(c, "store", "off", "restarted")
		h.sleep(2 * T)
	case "F9m":
		return h.splitMajority()
	case "F10":
		lk := h.cfg.Backend.(LeaderKiller)
		node, err := lk.KillLeader(h.ctx)
		if err != nil {
			return err
		}
		h.fault(c, node, "on", "leader SIGKILL")
		h.sleep(2 * T)
		if err := lk.RestartNode(h.ctx, node); err != nil {
			return err
		}
		h.fault(c, node, "off", "restarted")
		h.sleep(2 * T)
	case "F11":
		cs := h.cfg.Backend.(ClockStepper)
		d := 3 * T
		h.fault(c, "store", "on", "clock +"+d.String())
		if err := cs.StepClock(d); err != nil {
			return err
		}
		h.sleep(2 * T)
		h.fault(c, "store", "off", "")
		h.sleep(recover)
	default:
		return fmt.Errorf("unknown fault class %s", c)
	}
	return nil
}

// splitMajority is the Redlock failure Kleppmann describes: a holder of a
// key is cut off from master 2; once master 2's copy of its key has
// expired (one TTL), master 0 is killed and restarted without its data.
// Now only master 1 knows the holder, who still believes in its lease
// until its next renewal fails, while any other client wins masters 0 and
// 2: two holders at once.
func (h *harness) splitMajority() error {
	T := h.cfg.TTL
	ms := h.cfg.Backend.(MajorityStore)
	x := h.extra
	x.rate, x.long = 1, true
	if err := h.spawn(x); err != nil {
		return err
	}
	defer x.proc.Stop(syscall.SIGTERM, 2*time.Second)
	if h.reader([]*slot{x}, 20*T+5*time.Second) == nil {
		h.remark("F9m: in some episodes the extra holder never got a key")
		return nil
	}
	h.fault("F9m", x.id, "on", "cut from master 2")
	cut := Mono()
	x.proxies[2].Partition()
	defer x.proxies[2].Heal()
	// Wait until master 2's copy of the key has expired while the holder
	// renewed on masters 0 and 1.
	h.sleep(T + T/4)
	if h.reader([]*slot{x}, 2*T) == nil || !h.renewedSince(x, cut+int64(T)) {
		h.remark("F9m: in some episodes the holder did not keep its key on masters 0 and 1 while cut from master 2 (its grant did not include both), so master 0 was not restarted")
		h.fault("F9m", x.id, "off", "not set up")
		return nil
	}
	ms.KillMaster(0)
	if err := ms.RestartMaster(h.ctx, 0); err != nil {
		return fmt.Errorf("restart master 0: %w", err)
	}
	h.rec.Record(Event{Kind: EvMark, Target: x.id, Note: "master 0 restarted empty"})
	h.sleep(2 * T)
	x.proxies[2].Heal()
	h.fault("F9m", x.id, "off", "healed")
	h.sleep(h.ttlx(1.5))
	return nil
}

// renewedSince reports whether holder s had a successful renewal sent
// after t (from its history file).
func (h *harness) renewedSince(s *slot, t int64) bool {
	evs, _ := ReadHistoryFile(filepath.Join(h.cfg.Dir, "hist-"+s.id+".jsonl"))
	for _, e := range evs {
		if e.Kind == EvStoreRenew && e.Err == "" && e.T0 > t {
			return true
		}
	}
	return false
}

// netFault injects a network fault on one holder's link to the store:
// through its proxies, or (no network) through its in-process cut.
func (h *harness) netFault(c string) error {
	T := h.cfg.TTL
	var s *slot
	if c == "F12" {
		// A holder whose clock runs 40% slow, far beyond the client's Rho:
		// while it cannot renew it believes in its lease for 1/0.6 of the
		// time the store keeps it.
		h.extra.rate, h.extra.long = 0.6, true
		if err := h.spawn(h.extra); err != nil {
			return err
		}
		s = h.reader([]*slot{h.extra}, 20*T+5*time.Second)
		if s == nil {
			h.extra.proc.Stop(syscall.SIGTERM, 2*time.Second)
			h.remark("F12: in some episodes the slow-clock holder never got a key")
			return nil
		}
	} else {
		s = h.reader(nil, 10*T+5*time.Second)
		if s == nil {
			return fmt.Errorf("no holder read the counter for %s (see %s)", 10*T+5*time.Second, h.cfg.Dir)
		}
	}
	cut := func(on bool) {
		if len(s.proxies) == 0 {
			sig := syscall.SIGUSR2
			if on {
				sig = syscall.SIGUSR1
			}
			_ = s.proc.Signal(sig)
			return
		}
		for _, p := range s.proxies {
			if on {
				p.Partition()
			} else {
				p.Heal()
			}
		}
	}
	switch c {
	case "F4":
		h.fault(c, s.id, "on", "reply latency 1.5 x TTL")
		for _, p := range s.proxies {
			p.SetLatency(h.ttlx(1.5))
		}
		h.sleep(h.ttlx(2.5))
		for _, p := range s.proxies {
			p.SetLatency(0)
		}
	case "F5":
		h.fault(c, s.id, "on", "drop replies")
		for _, p := range s.proxies {
			p.SetDropReplies(true)
		}
		h.sleep(2 * T)
		for _, p := range s.proxies {
			p.SetDropReplies(false)
		}
	case "F6", "F12":
		h.fault(c, s.id, "on", "partition")
		cut(true)
		h.sleep(2 * T)
		cut(false)
	case "F7":
		h.fault(c, s.id, "on", "resets")
		for end := time.Now().Add(2 * T); time.Now().Before(end) && h.ctx.Err() == nil; {
			for _, p := range s.proxies {
				p.ResetAll()
			}
			h.sleep(T / 4)
		}
	}
	h.fault(c, s.id, "off", "")
	if c == "F12" {
		h.sleep(T)
		h.extra.proc.Stop(syscall.SIGTERM, 2*time.Second)
	}
	h.sleep(h.ttlx(1.5))
	return nil
}

// afterKill is how long to let the system recover after a holder kill: past
// the store's takeover bound, so that the next fault does not fall into
// the takeover being measured (an etcd leader change, for one, extends
// every lease).
func (h *harness) afterKill() time.Duration {
	return max(2*h.cfg.TTL, h.ttlx(h.bound+1))
}
