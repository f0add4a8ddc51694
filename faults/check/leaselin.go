package check

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/leasehold-go/leasehold/faults/history"
)

// The lease-history check: the store's grants, renewals and releases, as
// the holders' recording wrapper saw them (history.EvStoreAcquire,
// EvStoreRenew, EvStoreRelease, each with its call and return time), are
// operations on one register per key, "who holds K, with which token, and
// until when at the earliest", checked with porcupine. It catches a store
// that grants overlapping leases whether or not a protected write landed in
// the overlap.
//
// The model (leaseStep):
//
//   - A successful acquire of (owner, token) linearizes at a point where no
//     other grant is live: the key is free, or the live grant's expiry
//     bound has passed, or the live grant is the same owner's (a retried
//     acquire given its grant back). Its token must be above every token
//     granted before it, or be the live grant's own.
//   - Except under the faults the store declares it may lose a grant in
//     (LeaseLoss: Redis restarted without its data or its clock stepped,
//     Redlock's split majority, an advisory lock ended with its session,
//     an embedded store's holder clock stepped): an acquire whose call is
//     in such a fault's window (from a TTL before it starts to 3 TTLs
//     after it ends, as the concurrent-holders check attributes overlaps)
//     may also linearize over a live grant, which ends there (the store
//     lost or expired it). Its token must still be above every earlier
//     one, and the ended grant's renewals must fail: they are checked as
//     a replaced grant's are.
//   - A grant is live from its acquire's linearization point until a
//     release of it linearizes, or until its expiry bound: the call time of
//     its last successful acquire or renewal plus Params' hold (TTL x
//     (1-rho) - margin). That is the holder's own deadline as a client with
//     a true clock computes it, and it is conservative: the store started
//     its TTL after the call, on a clock that, by the design's assumption,
//     runs at a rate of at least 1-rho; so a correct store's expiry is never
//     before the bound. Only rates are assumed, never that clocks agree:
//     every timestamp is the machine's CLOCK_MONOTONIC. The store's own
//     expiry has no upper bound in the model (a store may keep a lease
//     longer), so refusals prove nothing and are left out: the check is of
//     safety (exclusion and token order), not of liveness.
//   - A successful renewal needs its grant to be the live one (not
//     replaced, not released) and moves the expiry bound.
//   - Outcomes the holder did not learn are porcupine's "maybe happened":
//     the model has both branches, applied and not (a nondeterministic
//     model, which porcupine checks over sets of states). That is an
//     acquire that failed other than by the store's refusal (a lost reply,
//     F5, a reset, a timeout: the store may have granted, with a token
//     nobody saw) and a release that failed (it may have freed the key). A
//     holder's kill (F3, F9 where it names holders) is a maybe-release of
//     every grant of the killed process, between its last recorded event
//     on the key (a release in flight when it died was sent after it) and
//     the kill (a store such as PostgreSQL's advisory locks ends the lock
//     with the session); the harness's unrecorded SIGKILL of every holder
//     at the end of the run likewise, up to the final probe's first call.
//     A release the store answered "not held by this owner" had no effect,
//     unless a fault was on during it: then the answer may be to a retry
//     of a request whose first attempt landed with its reply lost (the S3
//     store's conditional PUT, retried by the SDK after a partition, finds
//     the next holder's lease), and it is a maybe-release too. A renewal
//     that failed is left out: applied, it
//     only moves an expiry bound later, so its "not applied" branch is
//     always at least as permissive and the verdict is the same.
//
// A maybe-operation's window is its own call's, from its call to its
// return, not open-ended, although the request may reach the store later
// (a delayed request, F4). That loses nothing: over sets of states, the
// set after a maybe-operation contains the set before it, so applying it
// at the earliest point it can have is always at least as permissive as
// applying it later, except for a later call on the same grant that would
// need it not applied yet, and none comes: the client sends nothing for a
// grant after its release, cannot use a grant whose acquire reply it lost
// (its retry is an acquire of its own), and a killed process sends
// nothing. An open-ended return is what made it slow: porcupine must
// refute every placement of every open operation before it can call a
// history Illegal, which took a key of 2,000 operations past 10 s.
//
// Linearization points are tracked in the state as their earliest
// possible time (now): each operation takes the greatest of now, its call
// and (for an acquire over a live grant) the expiry bound, and must not
// pass its return. All the constraints are lower bounds, so the earliest
// point is the best one and the search stays exact.
//
// porcupine is exponential in the worst case, so each key is checked on
// its own with LeaseKeyTimeout; a key that times out is reported as timed
// out, never as Ok.

// LeaseKeyTimeout bounds porcupine's time on one key's lease history.
const LeaseKeyTimeout = 20 * time.Second

// lease operation kinds.
const (
	leaseAcquire = iota + 1
	leaseRenew
	leaseRelease
	leaseKill
)

// leaseOp is one operation on a key's lease register.
type leaseOp struct {
	kind      int
	key, src  string
	owner     string
	token     uint64 // 0: not known (an acquire whose reply was lost)
	call, ret int64  // ret is the end of time for a maybe-op
	maybe     bool   // the outcome is unknown: it may or may not have happened
	hold      int64  // the expiry bound after a successful call: call + hold
	ends      bool   // an acquire in a loss fault's window: it may end a live grant
	desc      string // for the report
}

// leaseState is the register: the live grant, if any, and its expiry
// bound; the highest token granted; the earliest time the linearization
// can be at.
type leaseState struct {
	held       bool
	owner, src string
	token      uint64
	until, now int64
	last       uint64
}

// leaseStep returns the states op can lead to from s: none if it cannot
// linearize here.
func leaseStep(s leaseState, op leaseOp) []any {
	var out []any
	if op.maybe {
		out = append(out, s) // it did not happen
	}
	if ns, ok := leaseApply(s, op); ok {
		out = append(out, ns)
	}
	return out
}

// ownGrant reports whether the live grant is the one op names (a zero
// token on either side, not known, matches the owner alone).
func ownGrant(s leaseState, op leaseOp) bool {
	return s.held && s.owner == op.owner && (s.token == op.token || s.token == 0 || op.token == 0)
}

// leaseApply applies op to s at its earliest possible point.
func leaseApply(s leaseState, op leaseOp) (leaseState, bool) {
	t := max(s.now, op.call)
	own := ownGrant(s, op)
	ns := s
	switch op.kind {
	case leaseAcquire:
		// an acquire by the live grant's owner (a retry within one attempt
		// of the client, which uses a fresh owner id per attempt) is its
		// own, whatever token the store gives it
		own = s.held && s.owner == op.owner
		if s.held && !own && !op.ends {
			t = max(t, s.until) // the other grant must have expired first
		}
		if op.token != 0 && op.token <= s.last && !(own && op.token == s.token) {
			return s, false // a token not above one granted before
		}
		ns = leaseState{held: true, owner: op.owner, src: op.src, token: op.token, until: op.call + op.hold, last: max(s.last, op.token)}
		if own {
			ns.until = max(ns.until, s.until)
			if ns.token == 0 {
				ns.token = s.token
			}
		}
	case leaseRenew:
		if !own {
			return s, false // renewed a grant that was replaced or released
		}
		ns.until = max(s.until, op.call+op.hold)
	case leaseRelease:
		if own {
			ns = leaseState{last: s.last}
		}
	case leaseKill:
		if !s.held || s.src != op.src {
			return s, false // nothing of the killed process to free: only the no-op branch
		}
		ns = leaseState{last: s.last}
	}
	if t > op.ret {
		return s, false
	}
	ns.now = t
	return ns, true
}

// LeaseModel returns the porcupine model of a key's lease register (see
// the lease-history check above); the history handed to it is one key's.
func LeaseModel() porcupine.Model {
	m := &porcupine.NondeterministicModel{
		Init: func() []any { return []any{leaseState{}} },
		Step: func(state, input, _ any) []any {
			return leaseStep(state.(leaseState), input.(leaseOp))
		},
		Equal: func(a, b any) bool { return a.(leaseState) == b.(leaseState) },
		DescribeOperation: func(input, _ any) string {
			return input.(leaseOp).desc
		},
	}
	return m.ToModel()
}

// LeaseLoss is what the lease-history check needs to know of the faults
// under which a store's design lets it end a grant early.
type LeaseLoss struct {
	TTL    time.Duration // the run's TTL: a fault's window is [on - TTL, off + 3 x TTL]
	Faults []string      // the fault classes (Params.LossFaults)
}

// window reports whether t is in the window of an episode of one of the
// loss faults.
func (l LeaseLoss) window(eps []episode, t int64) bool {
	ttl := int64(l.TTL)
	for _, ep := range eps {
		if t >= ep.on-ttl && t <= ep.off+3*ttl && slices.Contains(l.Faults, ep.fault) {
			return true
		}
	}
	return false
}

// LeaseVerdict is the lease-history check's outcome for one run.
type LeaseVerdict struct {
	Result   string   // "Ok", "Illegal" or "Unknown" (a key timed out); "" with no operations
	Ops      int      // operations checked, over every key
	Keys     int      // keys checked
	Illegal  []string // the keys with no linearization, each with the operations where it ends
	TimedOut []string // the keys porcupine did not finish within LeaseKeyTimeout
	// Loss are the fault classes in whose windows an acquire could take
	// over a live grant (LeaseLoss: the store declares it may lose a
	// grant under them); none for most stores.
	Loss []string `json:",omitempty"`
}

// LeaseHistory checks the store-level lease history of a run (see the
// lease-history check above) for a store that declares no loss faults;
// hold is the expiry bound after a call (holdFor), timeout porcupine's
// time per key (0: LeaseKeyTimeout).
func LeaseHistory(evs []history.Event, hold time.Duration, timeout time.Duration) LeaseVerdict {
	return LeaseHistoryLoss(evs, hold, timeout, LeaseLoss{})
}

// LeaseHistoryLoss is LeaseHistory for a store that may end a grant early
// under loss's faults: an acquire in their windows may take over a live
// grant.
func LeaseHistoryLoss(evs []history.Event, hold, timeout time.Duration, loss LeaseLoss) LeaseVerdict {
	if timeout <= 0 {
		timeout = LeaseKeyTimeout
	}
	byKey := leaseOps(evs, int64(hold), loss)
	keys := make([]string, 0, len(byKey))
	for k := range byKey {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	v := LeaseVerdict{Keys: len(keys), Loss: loss.Faults}
	model := LeaseModel()
	for _, k := range keys {
		ops := byKey[k]
		sort.SliceStable(ops, func(i, j int) bool { return ops[i].call < ops[j].call })
		v.Ops += len(ops)
		pops := make([]porcupine.Operation, len(ops))
		for i, op := range ops {
			pops[i] = porcupine.Operation{ClientId: i, Input: op, Call: op.call, Return: op.ret}
		}
		res, info := porcupine.CheckOperationsVerbose(model, pops, timeout)
		switch res {
		case porcupine.Illegal:
			v.Illegal = append(v.Illegal, k+": "+stuckAt(ops, info))
		case porcupine.Unknown:
			v.TimedOut = append(v.TimedOut, fmt.Sprintf("%s (%d operations)", k, len(ops)))
		}
	}
	switch {
	case v.Ops == 0:
	case len(v.Illegal) > 0:
		v.Result = string(porcupine.Illegal)
	case len(v.TimedOut) > 0:
		v.Result = string(porcupine.Unknown)
	default:
		v.Result = string(porcupine.Ok)
	}
	return v
}

// stuckAt names where the longest partial linearization ends: the last
// operation it placed and the first (by call) it could not.
func stuckAt(ops []leaseOp, info porcupine.LinearizationInfo) string {
	var best []int
	for _, part := range info.PartialLinearizations() {
		for _, lin := range part {
			if len(lin) > len(best) {
				best = lin
			}
		}
	}
	placed := make(map[int]bool, len(best))
	for _, i := range best {
		placed[i] = true
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d of %d operations linearize", len(best), len(ops))
	if len(best) > 0 {
		fmt.Fprintf(&b, "; the last placed: %s", ops[best[len(best)-1]].desc)
	}
	for i, op := range ops {
		if !placed[i] && !op.maybe {
			fmt.Fprintf(&b, "; the first that cannot follow: %s", op.desc)
			break
		}
	}
	return b.String()
}

// judgeLease adds the lease-history check's missed target: a key whose
// history has no linearization even with the overlaps the store's design
// allows under its declared loss faults (Params.LossFaults), whatever the
// concurrent-holders check found. An overlap under a fault the store did
// not declare, or outside its window, or a token not above the ones
// before it, is the store breaking its own rules.
func judgeLease(r *RunResult) {
	m := r.Metrics
	if m.Lease.Result != string(porcupine.Illegal) {
		return
	}
	what := "lease history not linearizable (porcupine)"
	if len(m.Lease.Loss) > 0 {
		what += ", even with the takeovers the store's design allows under " + strings.Join(m.Lease.Loss, ", ")
	}
	r.Missed = append(r.Missed, what+": "+strings.Join(m.Lease.Illegal, "; "))
}
