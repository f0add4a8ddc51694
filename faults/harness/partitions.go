package harness

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/leasehold-go/leasehold/faults/check"
	"github.com/leasehold-go/leasehold/faults/history"
	"github.com/leasehold-go/leasehold/faults/netlab"
)

// The member partitions (F13-F16) cut the links between the members of a
// replicated store, in the run's network lab (package netlab), while the
// holders still reach every member through their proxies. Each episode
// checks that its cut bit, from what the members say of their leader
// (MemberPartitioner.LeaderSeen): a new leader elected, or a member that
// lost its leader. An episode that did not bite makes the run invalid.

const (
	// partitionHold is how long F13-F15 keep their cut, x TTL.
	partitionHold = 2.5
	// partitionBiteLimit bounds how long F13 keeps the leader isolated while
	// it waits for the followers to elect a new one.
	partitionBiteLimit = 30 * time.Second
	// partitionConverge bounds the wait, after a heal, for every member to
	// follow one leader again.
	partitionConverge = 60 * time.Second
	// flaps is the number of cuts of F16, one every TTL/2 (or the
	// PartitionPacer's flap).
	flaps = 8
)

// PartitionPacer is a MemberPartitioner whose Raft cannot lose or elect a
// leader at the default pace (F13-F15 hold their cut 2.5 x TTL, F16 cuts
// every TTL/2): PartitionPace returns how long F13-F15 hold their cut and
// each F16 cut lasts, for the run's TTL.
type PartitionPacer interface {
	PartitionPace(ttl time.Duration) (hold, flap time.Duration)
}

// LeaderMover is a MemberPartitioner whose leader can hand the leadership
// to another member: MoveLeader has member from, the leader, do it, and
// returns the new leader. F14 and F15 move it off an attached member that
// leads, so that they cut the holders' member as a follower.
type LeaderMover interface {
	MoveLeader(ctx context.Context, from int) (int, error)
}

// offAttached returns the leader l, or the new leader once an attached
// member that leads has handed the leadership over (LeaderMover).
func (h *harness) offAttached(mp MemberPartitioner, l int) (int, error) {
	lm, ok := mp.(LeaderMover)
	if !ok || !slices.Contains(mp.AttachedMembers(), l) {
		return l, nil
	}
	ctx, cancel := context.WithTimeout(h.ctx, 30*time.Second)
	defer cancel()
	next, err := lm.MoveLeader(ctx, l)
	if err != nil {
		return -1, fmt.Errorf("move the leadership off member %d: %w", l, err)
	}
	return next, nil
}

// pace returns how long F13-F15 hold their cut and each F16 cut lasts.
func (h *harness) pace(mp MemberPartitioner) (hold, flap time.Duration) {
	if pp, ok := mp.(PartitionPacer); ok {
		return pp.PartitionPace(h.cfg.TTL)
	}
	return h.ttlx(partitionHold), h.cfg.TTL / 2
}

// memberPartitioner applies F13-F16 to a store whose members run in the
// run's network lab; the others say why not.
func memberPartitioner(h *harness) (bool, string) {
	b := h.cfg.Backend
	if mp, ok := b.(MemberPartitioner); ok {
		switch {
		case mp.Lab() == nil:
			return false, "the run has no network lab (" + netlab.Env + "=off): the members share the host's loopback"
		case mp.Members() < 3:
			return false, fmt.Sprintf("%d members: a partition needs 3", mp.Members())
		}
		return true, ""
	}
	if _, ok := b.(MajorityStore); ok {
		return false, "Redlock's masters are independent: there is no link between them to cut (F9m covers its split majority)"
	}
	if _, ok := b.(LeaderKiller); ok {
		return false, "its members do not run in the run's network lab"
	}
	return false, "a single server: no members to cut"
}

// memberCut is one episode of F13, F14 or F15: a cut around the leader l
// and a victim v (the leader itself, or a follower), kept 2.5 x TTL (or
// the PartitionPacer's hold) and until bit holds for some member j
// (following seen, -1 for none) or limit passes, then healed.
type memberCut struct {
	class    string
	follower bool // the victim is a follower, else the leader
	what     func(l, v int) string
	cut      func(ctx context.Context, lab *netlab.Lab, l, v int) error
	limit    time.Duration // 0: the hold (2.5 x TTL, or the PartitionPacer's)
	bit      func(l, v, j, seen int) bool
	why      string // what did not happen when it did not bite
}

// isolateLeader is F13: the leader cut from both followers until they
// elect a new leader (the bit), 2.5 x TTL at least, then healed.
func (h *harness) isolateLeader() error {
	return h.cutMembers(memberCut{
		class: check.F13,
		what:  func(l, _ int) string { return fmt.Sprintf("member %d (the leader) isolated", l) },
		cut:   func(ctx context.Context, lab *netlab.Lab, l, _ int) error { return lab.Isolate(ctx, l) },
		limit: partitionBiteLimit,
		bit:   func(l, _, j, seen int) bool { return j != l && seen >= 0 && seen != l },
		why:   "no follower elected a new leader while the leader was isolated",
	})
}

// isolateMinority is F14: a follower cut from the others for 2.5 x TTL,
// one that some holders are pinned to if there is one; it must lose its
// leader (the bit).
func (h *harness) isolateMinority() error {
	return h.cutMembers(memberCut{
		class: check.F14, follower: true,
		what: func(_, f int) string { return fmt.Sprintf("member %d (a follower) isolated", f) },
		cut:  func(ctx context.Context, lab *netlab.Lab, _, f int) error { return lab.Isolate(ctx, f) },
		bit:  func(_, f, j, seen int) bool { return j == f && seen < 0 },
		why:  "the isolated follower never lost its leader",
	})
}

// bridge is F15: the leader and a follower cut from each other for 2.5 x
// TTL, the third member still sees both. It bites when the cut follower
// loses its leader or the leadership moves.
func (h *harness) bridge() error {
	return h.cutMembers(memberCut{
		class: check.F15, follower: true,
		what: func(l, f int) string { return fmt.Sprintf("members %d (the leader) and %d cut from each other", l, f) },
		cut:  func(ctx context.Context, lab *netlab.Lab, l, f int) error { return lab.Cut(ctx, l, f) },
		bit:  func(l, f, j, seen int) bool { return (j == f && seen < 0) || (seen >= 0 && seen != l) },
		why:  "the follower cut from the leader never lost it, and the leadership never moved",
	})
}

// cutMembers runs one episode of mc.
func (h *harness) cutMembers(mc memberCut) error {
	mp := h.cfg.Backend.(MemberPartitioner)
	l, err := h.leaderMember(mp)
	if err != nil {
		return err
	}
	v := l
	if mc.follower {
		if l, err = h.offAttached(mp, l); err != nil {
			return err
		}
		v = h.follower(mp, l)
	}
	hold, _ := h.pace(mp)
	start := time.Now()
	h.fault(mc.class, "store", "on", fmt.Sprintf("%s; holders pinned to %v", mc.what(l, v), mp.AttachedMembers()))
	if err := mc.cut(h.ctx, mp.Lab(), l, v); err != nil {
		return err
	}
	bit := h.watchLeaders(mp, start, start.Add(max(mc.limit, hold)), func(j, seen int) bool {
		return mc.bit(l, v, j, seen)
	})
	h.sleep(time.Until(start.Add(hold)))
	return h.healMembers(mc.class, mp, bit, mc.why)
}

// flap is F16: a new random cut every TTL/2 (or the PartitionPacer's
// flap; a member isolated, or two cut from each other), flaps times, then
// healed. It bites when some member
// lost its leader or the leadership moved.
func (h *harness) flap() error {
	mp := h.cfg.Backend.(MemberPartitioner)
	lab := mp.Lab()
	l, err := h.leaderMember(mp)
	if err != nil {
		return err
	}
	_, every := h.pace(mp)
	h.fault(check.F16, "store", "on", fmt.Sprintf("%d cuts, one every %s", flaps, every))
	bitten := 0
	for range flaps {
		if err := lab.Heal(h.ctx); err != nil {
			return err
		}
		n := mp.Members()
		a, b := h.rng.IntN(n), h.rng.IntN(n-1)
		if b >= a {
			b++
		}
		what := fmt.Sprintf("members %d and %d cut", a, b)
		if h.rng.IntN(2) == 0 {
			err, what = lab.Isolate(h.ctx, a), fmt.Sprintf("member %d isolated", a)
		} else {
			err = lab.Cut(h.ctx, a, b)
		}
		if err != nil {
			return err
		}
		h.rec.Record(history.Event{Kind: history.EvMark, Target: "store", Note: "F16: " + what})
		start := time.Now()
		end := start.Add(every)
		if h.watchLeaders(mp, start, end, func(_, seen int) bool { return seen < 0 || seen != l }) != "" {
			bitten++
		}
		h.sleep(time.Until(end))
	}
	bit := ""
	if bitten > 0 {
		bit = fmt.Sprintf("during %d of %d cuts a member had no leader or followed another than member %d, the leader before the first", bitten, flaps, l)
	}
	return h.healMembers(check.F16, mp, bit, "no member lost its leader and the leadership never moved")
}

// leaderMember returns the store's leader, asked for 30 s at most.
func (h *harness) leaderMember(mp MemberPartitioner) (int, error) {
	ctx, cancel := context.WithTimeout(h.ctx, 30*time.Second)
	defer cancel()
	l, err := mp.LeaderMember(ctx)
	if err != nil {
		return -1, fmt.Errorf("the leader: %w", err)
	}
	return l, nil
}

// follower returns a member other than the leader l: one that some
// holders are pinned to if there is one, else one drawn from the seed.
func (h *harness) follower(mp MemberPartitioner, l int) int {
	var fs []int
	for _, m := range mp.AttachedMembers() {
		if m != l {
			fs = append(fs, m)
		}
	}
	if len(fs) == 0 {
		for m := range mp.Members() {
			if m != l {
				fs = append(fs, m)
			}
		}
	}
	return fs[h.rng.IntN(len(fs))]
}

// watchLeaders asks every member, again and again until bit holds for one
// of them (member j follows seen, -1 for none) or until end, which leader
// it follows; it says what it saw when bit held, how long after start, and
// "" when it never did. A member that does not answer is passed over.
func (h *harness) watchLeaders(mp MemberPartitioner, start, end time.Time, bit func(j, seen int) bool) string {
	for {
		for j := range mp.Members() {
			ctx, cancel := context.WithTimeout(h.ctx, time.Second)
			seen, err := mp.LeaderSeen(ctx, j)
			cancel()
			if err == nil && bit(j, seen) {
				after := time.Since(start).Round(time.Millisecond)
				if seen < 0 {
					return fmt.Sprintf("member %d had no leader %s after the cut", j, after)
				}
				return fmt.Sprintf("member %d followed member %d %s after the cut", j, seen, after)
			}
		}
		if !time.Now().Before(end) || h.ctx.Err() != nil {
			return ""
		}
		h.sleep(20 * time.Millisecond)
	}
}

// healMembers ends a member partition of class c: every cut healed, then a
// wait until every member follows one leader, then the backend's Heal, and
// 2 x TTL of recovery. An episode that did not bite (bit "", why not) makes
// the run invalid.
func (h *harness) healMembers(c string, mp MemberPartitioner, bit, why string) error {
	if err := mp.Lab().Heal(h.ctx); err != nil {
		return err
	}
	note := "healed; bit: " + bit
	if bit == "" {
		note = "healed; did not bite: " + why
		h.invalidate(c + " (" + check.Describe(c) + "): " + why)
	}
	h.fault(c, "store", "off", note)
	if !h.converged(mp) && h.ctx.Err() == nil {
		return fmt.Errorf("after %s: the members did not agree on a leader within %s of the heal", c, partitionConverge)
	}
	if err := h.heal(c); err != nil {
		return err
	}
	h.sleep(2 * h.cfg.TTL)
	return nil
}

// converged waits until every member follows the same leader.
func (h *harness) converged(mp MemberPartitioner) bool {
	end := time.Now().Add(partitionConverge)
	for time.Now().Before(end) && h.ctx.Err() == nil {
		agreed, first := true, -2
		for j := range mp.Members() {
			ctx, cancel := context.WithTimeout(h.ctx, time.Second)
			seen, err := mp.LeaderSeen(ctx, j)
			cancel()
			if err != nil || seen < 0 || (first != -2 && seen != first) {
				agreed = false
				break
			}
			first = seen
		}
		if agreed {
			return true
		}
		h.sleep(20 * time.Millisecond)
	}
	return false
}

// invalidate makes the run invalid: a fault did not bite (why says which
// and how).
func (h *harness) invalidate(why string) {
	for _, x := range h.invalid {
		if x == why {
			return
		}
	}
	h.invalid = append(h.invalid, why)
}
