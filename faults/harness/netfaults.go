package harness

import (
	"syscall"
	"time"

	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/faults/check"
)

// The network faults hit one holder's link to the store: through the
// holder's proxies, or, for the embedded store (no network), through the
// holder's in-process cut (SIGUSR1 cuts, SIGUSR2 heals).

// netFault runs fault c on a busy holder: marked on, act, marked off, then
// 1.5 x TTL of recovery.
func (h *harness) netFault(c, note string, act func(s *slot)) error {
	s, err := h.busyHolder()
	if err != nil {
		return err
	}
	h.fault(c, s.id, "on", note)
	act(s)
	h.fault(c, s.id, "off", "")
	h.sleep(h.ttlx(1.5))
	return nil
}

// replyLatency is F4: every reply to the holder delayed by 1.5 x TTL, for
// 2.5 x TTL.
func (h *harness) replyLatency() error {
	return h.netFault(check.F4, "reply latency 1.5 x TTL", func(s *slot) {
		for _, p := range s.proxies {
			p.SetLatency(h.ttlx(1.5))
		}
		h.sleep(h.ttlx(2.5))
		for _, p := range s.proxies {
			p.SetLatency(0)
		}
	})
}

// dropReplies is F5: the holder's replies dropped, after the store applied
// the request, for 2 x TTL.
func (h *harness) dropReplies() error {
	return h.netFault(check.F5, "drop replies", func(s *slot) {
		for _, p := range s.proxies {
			p.SetDropReplies(true)
		}
		h.sleep(2 * h.cfg.TTL)
		for _, p := range s.proxies {
			p.SetDropReplies(false)
		}
	})
}

// partition is F6: the holder cut from the store for 2 x TTL.
func (h *harness) partition() error {
	return h.netFault(check.F6, "partition", h.cutFor)
}

// resets is F7: the holder's connections reset every TTL/4 for 2 x TTL.
func (h *harness) resets() error {
	return h.netFault(check.F7, "resets", func(s *slot) {
		T := h.cfg.TTL
		for end := time.Now().Add(2 * T); time.Now().Before(end) && h.ctx.Err() == nil; {
			for _, p := range s.proxies {
				p.ResetAll()
			}
			h.sleep(T / 4)
		}
	})
}

// slowClock is F12: the extra holder, whose clock runs 40% slow (far
// beyond the client's Rho), is cut from the store for 2 x TTL while it
// holds a key: while it cannot renew, it believes in its lease for 1/0.6
// of the time the store keeps it.
func (h *harness) slowClock() error { return h.skewedHolder(check.F12, 0.6) }

// slowClockWithin is F12b: the same with a clock 0.5% slow, within the
// client's default Rho (1%), the rate error the design claims to
// tolerate: its deadline still ends before the store's expiry, and the
// checkers hold its operations to the true clock's deadline.
func (h *harness) slowClockWithin() error {
	return h.skewedHolder(check.F12b, 1-leasehold.DefaultRho/2)
}

// skewedHolder spawns the extra holder with its clock at rate and cuts it
// from the store for 2 x TTL while it holds a key.
func (h *harness) skewedHolder(class string, rate float64) error {
	T := h.cfg.TTL
	x := h.extra
	x.rate, x.long, x.shift = rate, true, ""
	if err := h.spawn(x); err != nil {
		return err
	}
	s := h.reader([]*slot{x}, 20*T+5*time.Second)
	if s == nil {
		h.halt(x)
		h.remark(class + ": in some episodes the slow-clock holder never got a key")
		return nil
	}
	h.fault(class, s.id, "on", "partition")
	h.cutFor(s)
	h.fault(class, s.id, "off", "")
	h.sleep(T)
	h.halt(x)
	h.sleep(h.ttlx(1.5))
	return nil
}

// cutFor cuts holder s from the store for 2 x TTL, then heals the cut.
func (h *harness) cutFor(s *slot) {
	h.cut(s, true)
	h.sleep(2 * h.cfg.TTL)
	h.cut(s, false)
}

// cut partitions (on) or heals holder s's link to the store.
func (h *harness) cut(s *slot, on bool) {
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
