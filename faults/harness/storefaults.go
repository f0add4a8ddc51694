package harness

import (
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/leasehold-go/leasehold/internal/testserver"

	"github.com/leasehold-go/leasehold/faults/check"
	"github.com/leasehold-go/leasehold/faults/history"
)

// pauseStore is F8: every server of the store SIGSTOPped for 2 x TTL.
func (h *harness) pauseStore() error {
	T := h.cfg.TTL
	p := h.cfg.Backend.(StorePauser)
	h.fault(check.F8, "store", "on", "SIGSTOP")
	if err := p.PauseStore(); err != nil {
		return err
	}
	h.sleep(2 * T)
	if err := p.ResumeStore(); err != nil {
		return err
	}
	h.fault(check.F8, "store", "off", "SIGCONT")
	if err := h.heal(check.F8); err != nil {
		return err
	}
	h.sleep(2 * T)
	return nil
}

// heal lets a Healer backend check and repair its servers after fault c,
// recording what it did in the history and the run's notes.
func (h *harness) heal(c string) error {
	hb, ok := h.cfg.Backend.(Healer)
	if !ok {
		return nil
	}
	did, err := hb.Heal(h.ctx)
	if err != nil {
		return fmt.Errorf("after %s: %w", c, err)
	}
	if did != "" {
		h.rec.Record(history.Event{Kind: history.EvMark, Target: "store", Note: "healed after " + c + ": " + did})
		h.remark(c + ": " + did)
	}
	return nil
}

// restartStore is F9: the store SIGKILLed and restarted on its data.
func (h *harness) restartStore() error { return h.restart(check.F9, false) }

// restartStoreEmpty is F9b: the store SIGKILLed and restarted without its
// data.
func (h *harness) restartStoreEmpty() error { return h.restart(check.F9b, true) }

// restart kills the store and restarts it, wiping its data first if wipe.
// A store without a server process (the embedded store) is "killed" by
// killing every process using its file at once.
func (h *harness) restart(c string, wipe bool) error {
	r, ok := h.cfg.Backend.(StoreRestarter)
	if !ok {
		return h.killEveryHolder(c)
	}
	h.fault(c, "store", "on", "SIGKILL")
	if err := r.KillStore(); err != nil {
		return err
	}
	h.sleep(h.cfg.TTL / 2)
	if err := r.RestartStore(h.ctx, wipe); err != nil {
		return fmt.Errorf("restart the store: %w", err)
	}
	h.fault(c, "store", "off", "restarted")
	if err := h.heal(c); err != nil {
		return err
	}
	h.sleep(2 * h.cfg.TTL)
	return nil
}

// restartBacking is F9k: the database under the store's server (the
// apiserver's etcd) SIGKILLed and restarted on its data, the server left
// running: it answers errors meanwhile and reconnects on its own.
func (h *harness) restartBacking() error {
	r := h.cfg.Backend.(BackingRestarter)
	h.fault(check.F9k, "store", "on", "SIGKILL of the store's database")
	if err := r.KillBacking(); err != nil {
		return err
	}
	h.sleep(h.cfg.TTL / 2)
	if err := r.RestartBacking(h.ctx); err != nil {
		return fmt.Errorf("restart the store's database: %w", err)
	}
	h.fault(check.F9k, "store", "off", "restarted")
	h.sleep(2 * h.cfg.TTL)
	return nil
}

// killEveryHolder SIGKILLs every regular holder at once and respawns them.
func (h *harness) killEveryHolder(c string) error {
	var ids []string
	var ps []*testserver.Process
	for _, s := range h.slots {
		ids = append(ids, s.id)
		ps = append(ps, s.proc)
	}
	h.fault(c, strings.Join(ids, ","), "on", "SIGKILL of every holder")
	testserver.KillAll(ps...)
	h.fault(c, strings.Join(ids, ","), "off", "")
	for _, s := range h.slots {
		if err := h.spawn(s); err != nil {
			return err
		}
	}
	h.sleep(h.afterKill())
	return nil
}

// killLeader is F10: the leader of a replicated store SIGKILLed, restarted
// after 2 x TTL.
func (h *harness) killLeader() error {
	T := h.cfg.TTL
	lk := h.cfg.Backend.(LeaderKiller)
	node, err := lk.KillLeader(h.ctx)
	if err != nil {
		return err
	}
	h.fault(check.F10, node, "on", "leader SIGKILL")
	h.sleep(2 * T)
	if err := lk.RestartNode(h.ctx, node); err != nil {
		return err
	}
	h.fault(check.F10, node, "off", "restarted")
	h.sleep(2 * T)
	return nil
}

// stepClock is F11: the store server's wall clock stepped 3 x TTL forward.
func (h *harness) stepClock() error {
	T := h.cfg.TTL
	cs := h.cfg.Backend.(ClockStepper)
	d := 3 * T
	h.fault(check.F11, "store", "on", "clock +"+d.String())
	if err := cs.StepClock(d); err != nil {
		return err
	}
	h.sleep(2 * T)
	h.fault(check.F11, "store", "off", "")
	h.sleep(h.ttlx(1.5))
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
	x.rate, x.long, x.shift = 1, true, ""
	if err := h.spawn(x); err != nil {
		return err
	}
	defer h.halt(x)
	if h.reader([]*slot{x}, 20*T+5*time.Second) == nil {
		h.remark("F9m: in some episodes the extra holder never got a key")
		return nil
	}
	h.fault("F9m", x.id, "on", "cut from master 2")
	cut := history.Mono()
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
	h.rec.Record(history.Event{Kind: history.EvMark, Target: x.id, Note: "master 0 restarted empty"})
	h.sleep(2 * T)
	x.proxies[2].Heal()
	h.fault("F9m", x.id, "off", "healed")
	h.sleep(h.ttlx(1.5))
	return nil
}

// renewedSince reports whether holder s had a successful renewal sent
// after t (from its history file).
func (h *harness) renewedSince(s *slot, t int64) bool {
	evs, _ := history.ReadFile(filepath.Join(h.cfg.Dir, "hist-"+s.id+".jsonl"))
	for _, e := range evs {
		if e.Kind == history.EvStoreRenew && e.Err == "" && e.T0 > t {
			return true
		}
	}
	return false
}
