package check

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/leasehold-go/leasehold/faults/history"
)

// The workloads of the primitives built on leases: W8, the semaphore
// (package semaphore: at most N holders, each slot fenced on its own key),
// and W9, the read-write lock (package rwlock: never a reader with a
// writer, never two writers, a waiting writer gets in).
//
// Their holders record each hold as an EvAcquired (T0 the call, T its
// return: the hold's start; Key the slot key or the lock's key; Token the
// slot's token or the sequencer's; Val the write epoch; Note the mode:
// "permit", "read" or "write") and an EvReleased whose T0 is the hold's end
// as its holder saw it: the release call, or the holder's deadline if that
// came first. A hold without an EvReleased (its holder was killed) ends at
// the kill. The resource records EvAdmit and EvFenced with Token the token
// (or epoch) shown and Highest the bound it was judged against: a write
// admitted below its bound is a stale write admitted.

// Modes of a primitive's hold (the Note of EvAcquired and EvReleased).
const (
	ModePermit = "permit"
	ModeRead   = "read"
	ModeWrite  = "write"
)

// PrimHold is one hold of a semaphore permit or a read-write lock, as its
// holder saw it.
type PrimHold struct {
	Holder string
	Mode   string
	Key    string // the slot key (permit) or the lock's key
	Token  uint64
	Epoch  uint64
	Wait   time.Duration // from the call to the grant
	Start  int64         // the call returned
	End    int64         // released, the holder's deadline, or killed
}

// PrimResult is the outcome of one run of W8 or W9.
type PrimResult struct {
	Store    string
	Workload string // "W8" (semaphore) or "W9" (read-write lock)
	Seed     uint64
	TTL      time.Duration
	Slots    int  // W8: the N the check holds the holders to
	Mutation bool // a broken primitive (W8: N+1 slots; W9: writers ignore readers) and no fence check
	Seconds  float64
	Holders  int
	Episodes map[string]int

	Holds        int
	Writes       int // admitted by the resource
	StaleRefused int // refused by the resource as stale
	StaleAdmit   int // admitted below the bound they were judged by (target: 0)
	// W8: moments more than Slots holders held at once, and a slot held
	// by two at once; W9: pairs of holds with a writer that overlap.
	OverAdmit      int
	SlotTwice      int
	Conflicts      int
	TokensBackward int // a slot's (W8) or the writers' (W9) tokens not increasing
	WriterHolds    int
	LongestWait    time.Duration // W9: a writer's longest wait for the lock
	StarveBound    time.Duration // W9: a longer wait is a starved writer
	Examples       []string

	Caught  bool // a mutation run: its violations were seen
	Invalid []string
	Missed  []string
	Notes   []string
	Dir     string
}

// PrimHolds pairs the holders' EvAcquired and EvReleased into holds. A hold
// whose holder was killed before releasing ends at the kill: its F3 fault
// event's start (Target the holder: the SIGKILL is sent then, and the
// holder runs no more of its code; a store whose grants end with the
// holder's connection, as PostgreSQL's advisory locks do, may free the slot
// before the harness has seen the process die, which is the F3 event's
// end), or the run's EvEndKill, or at end. The concurrent-holders check of
// the other workloads ends a killed holder's holds at the same moment.
func PrimHolds(evs []history.Event, end int64) []PrimHold {
	type id struct {
		src, key string
		token    uint64
	}
	open := map[id]*PrimHold{}
	var holds []*PrimHold
	killedAt := func(src string) int64 {
		for _, e := range evs {
			if (e.Kind == history.EvFault && e.Fault == F3 && e.Phase == "on" && e.Target == src) ||
				(e.Kind == history.EvEndKill && slices.Contains(strings.Split(e.Target, ","), src)) {
				return e.T
			}
		}
		return end
	}
	for _, e := range evs {
		switch e.Kind {
		case history.EvAcquired:
			if e.Note == "" {
				continue
			}
			h := &PrimHold{Holder: e.Src, Mode: e.Note, Key: e.Key, Token: e.Token, Epoch: uint64(e.Val), Wait: time.Duration(e.T - e.T0), Start: e.T, End: -1}
			open[id{e.Src, e.Key, e.Token}] = h
			holds = append(holds, h)
		case history.EvReleased:
			if h := open[id{e.Src, e.Key, e.Token}]; h != nil {
				h.End = e.T0
				delete(open, id{e.Src, e.Key, e.Token})
			}
		}
	}
	out := make([]PrimHold, 0, len(holds))
	for _, h := range holds {
		if h.End < 0 {
			h.End = killedAt(h.Holder)
		}
		if h.End > h.Start { // a hold whose deadline passed before the grant returned was never held
			out = append(out, *h)
		}
	}
	slices.SortFunc(out, func(a, b PrimHold) int { return int(a.Start - b.Start) })
	return out
}

// OverAdmissions returns how often more than n holds were held at once
// (each time the count rose past n) and how often a slot key was held by
// two holds at once, with examples.
func OverAdmissions(holds []PrimHold, n int) (over, twice int, examples []string) {
	for i, h := range holds {
		var at []string
		for _, o := range holds[:i] {
			if o.End > h.Start {
				at = append(at, fmt.Sprintf("%s on %s (token %d)", o.Holder, o.Key, o.Token))
				if o.Key == h.Key {
					twice++
				}
			}
		}
		if len(at) >= n {
			over++
			if len(examples) < 3 {
				examples = append(examples, fmt.Sprintf("%d holders: %s took %s (token %d) while %s", len(at)+1, h.Holder, h.Key, h.Token, strings.Join(at, ", ")))
			}
		}
	}
	return over, twice, examples
}

// RWConflicts returns the pairs of holds that overlap where one is a
// writer's (a reader with a writer, or two writers), with examples.
func RWConflicts(holds []PrimHold) (conflicts int, examples []string) {
	for i, a := range holds {
		for _, b := range holds[i+1:] {
			if b.Start >= a.End {
				continue // holds are sorted by start; later ones may still overlap a
			}
			if a.Mode == ModeWrite || b.Mode == ModeWrite {
				conflicts++
				if len(examples) < 3 {
					examples = append(examples, fmt.Sprintf("%s (%s, epoch %d) from %s into %s's %s hold (epoch %d)",
						b.Holder, b.Mode, b.Epoch, time.Duration(b.Start-a.Start), a.Holder, a.Mode, a.Epoch))
				}
			}
		}
	}
	return conflicts, examples
}

// TokensBackward counts holds whose token is not above the previous hold's
// of the same key (holds in the order they began).
func TokensBackward(holds []PrimHold) int {
	last, n := map[string]uint64{}, 0
	for _, h := range holds {
		if p, ok := last[h.Key]; ok && h.Token <= p {
			n++
		}
		last[h.Key] = h.Token
	}
	return n
}

// Prims fills r's counts from the history of a W8 or W9 run ending at end.
func Prims(evs []history.Event, end int64, r *PrimResult) {
	holds := PrimHolds(evs, end)
	r.Holds = len(holds)
	for _, e := range evs {
		switch e.Kind {
		case history.EvAdmit:
			r.Writes++
			if e.Token < e.Highest {
				r.StaleAdmit++
			}
		case history.EvFenced:
			r.StaleRefused++
		}
	}
	if r.Workload == "W8" {
		r.OverAdmit, r.SlotTwice, r.Examples = OverAdmissions(holds, r.Slots)
		r.TokensBackward = TokensBackward(holds)
		return
	}
	r.Conflicts, r.Examples = RWConflicts(holds)
	var writers []PrimHold
	for _, h := range holds {
		if h.Mode == ModeWrite {
			writers = append(writers, h)
			r.LongestWait = max(r.LongestWait, h.Wait)
		}
	}
	r.WriterHolds = len(writers)
	r.TokensBackward = TokensBackward(writers)
}

// JudgePrims decides a W8 or W9 run's validity and missed targets; a
// mutation run must be caught (its violations seen) and misses nothing
// else.
func JudgePrims(r *PrimResult, safeTokens bool) {
	violations := r.OverAdmit + r.SlotTwice + r.Conflicts
	if r.Holds < 5 {
		r.Invalid = append(r.Invalid, fmt.Sprintf("only %d holds", r.Holds))
	}
	if r.Mutation {
		r.Caught = violations > 0
		if !r.Caught {
			r.Missed = append(r.Missed, "mutation NOT caught: the broken primitive's holders never overlapped")
		}
		return
	}
	if r.Episodes[F2] > 0 && r.StaleRefused+r.StaleAdmit == 0 {
		r.Invalid = append(r.Invalid, "no pause (F2) made a stale write attempt")
	}
	add := func(n int, what string) {
		if n > 0 {
			r.Missed = append(r.Missed, fmt.Sprintf("%s: %d", what, n))
		}
	}
	add(r.StaleAdmit, "stale writes admitted")
	if r.Workload == "W8" {
		add(r.OverAdmit, fmt.Sprintf("more than %d holders at once", r.Slots))
		add(r.SlotTwice, "a slot held twice at once")
	} else {
		add(r.Conflicts, "holds overlapping a writer's")
		if r.WriterHolds == 0 {
			r.Missed = append(r.Missed, "no writer got the lock")
		} else if r.StarveBound > 0 && r.LongestWait > r.StarveBound {
			r.Missed = append(r.Missed, fmt.Sprintf("a writer waited %s (bound %s)", r.LongestWait.Round(time.Millisecond), r.StarveBound))
		}
	}
	if safeTokens {
		add(r.TokensBackward, "tokens not increasing")
	}
}
