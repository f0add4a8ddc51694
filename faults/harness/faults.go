package harness

import (
	"fmt"
	"slices"

	"github.com/leasehold-go/leasehold/faults/check"
)

// fault is one row of the fault table: a fault class (check.Faults names
// and describes it), which stores it applies to, and how it is injected.
type fault struct {
	id string
	// applies reports whether the class applies to the run's store, from
	// the backend's capabilities (StorePauser, StoreRestarter, Wiper,
	// MajorityStore, LeaderKiller, ClockStepper, LateCleanupStore) and
	// whether it has a network. When it does not, why says why; when it
	// does, a non-empty why is a note for the report all the same.
	applies func(h *harness) (ok bool, why string)
	// inject runs one episode of the class and lets the system recover.
	inject func(h *harness) error
}

// faultTable is every fault class, in the order of check.Faults.
var faultTable = []fault{
	{check.F1, always, (*harness).shortPause},
	{check.F2, always, (*harness).longPause},
	{check.F3, always, (*harness).killHolder},
	{check.F4, networked, (*harness).replyLatency},
	{check.F5, networked, (*harness).dropReplies},
	{check.F5c, lateCleanupApplies, (*harness).lateCleanup},
	{check.F6, always, (*harness).partition},
	{check.F7, networked, (*harness).resets},
	{check.F8, storePauser, (*harness).pauseStore},
	{check.F9, storeRestart, (*harness).restartStore},
	{check.F9b, storeWiper, (*harness).restartStoreEmpty},
	{check.F9m, majorityStore, (*harness).splitMajority},
	{check.F9k, backingRestarter, (*harness).restartBacking},
	{check.F10, leaderKiller, (*harness).killLeader},
	{check.F11, clockStepper, (*harness).stepClock},
	{check.F12, always, (*harness).slowClock},
	{check.F12b, always, (*harness).slowClockWithin},
	{check.F13, memberPartitioner, (*harness).isolateLeader},
	{check.F14, memberPartitioner, (*harness).isolateMinority},
	{check.F15, memberPartitioner, (*harness).bridge},
	{check.F16, memberPartitioner, (*harness).flap},
	{check.F17, wallShifter, (*harness).stepHolderWall},
}

// faultByID returns the row of class id.
func faultByID(id string) (fault, error) {
	for _, f := range faultTable {
		if f.id == id {
			return f, nil
		}
	}
	return fault{}, fmt.Errorf("unknown fault class %s", id)
}

func always(*harness) (bool, string) { return true, "" }

// unless returns ok and, when the class does not apply, why not: a class
// that applies gets no note from its reason to be skipped.
func unless(ok bool, why string) (bool, string) {
	if ok {
		return true, ""
	}
	return false, why
}

func networked(h *harness) (bool, string) {
	return unless(len(h.cfg.Backend.Endpoints()) > 0, "the store has no network")
}

func storePauser(h *harness) (bool, string) {
	_, ok := h.cfg.Backend.(StorePauser)
	return unless(ok, "the store has no server process to pause")
}

// storeRestart always applies (the embedded store's "store kill" is the
// kill of every holder); a backend's RestartNote, if it has one, says what
// its restart does not keep, for the report.
func storeRestart(h *harness) (bool, string) {
	if n, ok := h.cfg.Backend.(interface{ RestartNote() string }); ok {
		return true, n.RestartNote()
	}
	return true, ""
}

func storeWiper(h *harness) (bool, string) {
	b := h.cfg.Backend
	if _, ok := b.(StoreRestarter); !ok {
		return false, "the store has no server process to restart"
	}
	if w, ok := b.(Wiper); ok && w.WipeMeaningful() {
		return true, ""
	}
	if n, ok := b.(interface{ WipeNote() string }); ok {
		return false, n.WipeNote()
	}
	return false, "the store keeps its data across a restart by design"
}

func majorityStore(h *harness) (bool, string) {
	_, ok := h.cfg.Backend.(MajorityStore)
	return unless(ok, "the store has no independent masters")
}

func backingRestarter(h *harness) (bool, string) {
	_, ok := h.cfg.Backend.(BackingRestarter)
	return unless(ok, "the store's server keeps no database of its own to restart under it (only the kube store's apiserver does: its etcd)")
}

func leaderKiller(h *harness) (bool, string) {
	_, ok := h.cfg.Backend.(LeaderKiller)
	return unless(ok, "the store has no leader to kill")
}

// clockStepper applies where the backend can step its server's clock; its
// note (how the clock is stepped, or why it cannot be) goes to the report.
func clockStepper(h *harness) (bool, string) {
	cs, ok := h.cfg.Backend.(ClockStepper)
	if !ok {
		return false, "no way to step this store's clock without stepping the host's"
	}
	can, note := cs.CanStepClock()
	if !can && note == "" {
		note = "no way to step this store's clock without stepping the host's"
	}
	return can, note
}

func lateCleanupApplies(h *harness) (bool, string) {
	lc, ok := h.cfg.Backend.(LateCleanupStore)
	if !ok {
		return false, "the harness injects it only where it recognises a granted acquire's reply on the wire (PostgreSQL's lease rows)"
	}
	_, ok, why := lc.LateCleanup()
	return ok && len(h.cfg.Backend.Endpoints()) > 0, why
}

// classes returns the fault classes to run on this store, in table order
// (F2 twice: pauses are what fencing is for), and notes the classes that
// do not apply and why. A mutation run has three F2 pauses and nothing else.
func (h *harness) classes() []string {
	if h.cfg.Mutation {
		return []string{check.F2, check.F2, check.F2}
	}
	only := h.cfg.Faults
	var out []string
	for _, f := range faultTable {
		if len(only) > 0 && !slices.Contains(only, f.id) {
			continue
		}
		ok, why := f.applies(h)
		if !ok {
			h.note(f.id, why)
			continue
		}
		if why != "" {
			h.remark(why)
		}
		out = append(out, f.id)
		if f.id == check.F2 && len(only) == 0 {
			out = append(out, check.F2)
		}
	}
	return out
}
