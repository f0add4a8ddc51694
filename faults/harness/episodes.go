package harness

import (
	"fmt"
	"syscall"
	"time"

	"github.com/leasehold-go/leasehold/faults/check"
	"github.com/leasehold-go/leasehold/faults/history"
)

// episode injects one fault of class c, from the fault table, and lets the
// system recover.
func (h *harness) episode(c string) error {
	f, err := faultByID(c)
	if err != nil {
		return err
	}
	h.reviveDead()
	h.logf("  %s %s", c, check.Describe(c))
	return f.inject(h)
}

// busyHolder waits for a regular holder in the middle of an operation: the
// target of a holder fault. The wait allows for the store's own takeover
// bound after the previous fault (Consul's is 21 x TTL) and a loaded
// machine: long runs on two cores at load 25 saw ZooKeeper's and Consul's
// holders need more than the 15 s it was after a member partition.
func (h *harness) busyHolder() (*slot, error) {
	T := h.cfg.TTL
	limit := max(20*T, time.Duration((h.bound+5)*float64(T))) + 10*time.Second
	s := h.reader(nil, limit)
	if s == nil {
		return nil, fmt.Errorf("no holder read the counter for %s: the holders are not making progress (see %s)", limit, h.cfg.Dir)
	}
	return s, nil
}

// shortPause is F1: a holder paused for less than its renew margin, which
// must not lose its lease.
func (h *harness) shortPause() error { return h.pause(check.F1, 0.3, false) }

// longPause is F2: a holder paused for 1-3 x TTL, so that it wakes with a
// stale lease in the middle of an operation. One pause per pass outlasts
// the store's takeover bound by a TTL or more, so that another holder
// surely takes the key and writes meanwhile: that pause must bite.
func (h *harness) longPause() error {
	f, mustBite := 1+2*h.rng.Float64(), false
	if h.cfg.Mutation || !h.longPaused[h.pass] {
		h.longPaused[h.pass] = true
		f = h.bound + 1 + 0.5*h.rng.Float64()
		mustBite = true
	}
	return h.pause(check.F2, f, mustBite)
}

// pause SIGSTOPs a busy holder for f x TTL. A pause that must bite and made
// no stale write attempt (the holder had already written when the signal
// landed, on a starved machine) is made again, at most twice more. With
// the fence disabled nothing is refused: the mutation run is judged by the
// stale writes admitted instead.
func (h *harness) pause(c string, f float64, mustBite bool) error {
	for try := 0; ; try++ {
		s, err := h.busyHolder()
		if err != nil {
			return err
		}
		on := history.Mono()
		_ = s.proc.Signal(syscall.SIGSTOP)
		h.fault(c, s.id, "on", fmt.Sprintf("SIGSTOP %.2f x TTL", f))
		h.sleep(h.ttlx(f))
		_ = s.proc.Signal(syscall.SIGCONT)
		h.fault(c, s.id, "off", "SIGCONT")
		h.sleep(h.ttlx(1.5))
		if !mustBite || h.cfg.Mutation || try == 2 || h.fencedSince(s.id, on) || h.ctx.Err() != nil {
			return nil
		}
		h.logf("  %s did not bite (no stale write from %s): pausing again", c, s.id)
	}
}

// killHolder is F3: a busy holder SIGKILLed and respawned.
func (h *harness) killHolder() error {
	s, err := h.busyHolder()
	if err != nil {
		return err
	}
	h.fault(check.F3, s.id, "on", "SIGKILL")
	s.proc.Kill()
	h.fault(check.F3, s.id, "off", "")
	if err := h.spawn(s); err != nil {
		return err
	}
	h.sleep(h.afterKill())
	return nil
}

// afterKill is how long to let the system recover after a holder kill: past
// the store's takeover bound, so that the next fault does not fall into
// the takeover being measured (an etcd leader change, for one, extends
// every lease).
func (h *harness) afterKill() time.Duration {
	return max(2*h.cfg.TTL, h.ttlx(h.bound+1))
}
