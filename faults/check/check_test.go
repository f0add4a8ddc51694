package check_test

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/leasehold-go/leasehold/faults/check"
	"github.com/leasehold-go/leasehold/faults/history"
)

const ms = int64(time.Millisecond)

func grant(src, key, owner string, tok uint64, t0, t int64) history.Event {
	return history.Event{Src: src, Kind: history.EvStoreAcquire, Key: key, Owner: owner, Token: tok, T0: t0 * ms, T: t * ms}
}

func checkEvents(evs []history.Event) *check.Metrics {
	return check.Run(evs, check.Params{TTL: time.Second})
}

func TestTokensIncreasingPass(t *testing.T) {
	m := checkEvents([]history.Event{
		grant("a", "k", "o1", 1, 0, 1),
		grant("b", "k", "o2", 2, 5, 6),
		grant("a", "k", "o1", 1, 7, 8), // the same grant returned again to its owner
		grant("c", "k", "o3", 3, 4, 9), // concurrent with o2's acquire: any order
	})
	if m.Grants != 3 || m.TokenBackwards != 0 || m.TokenRepeats != 0 {
		t.Fatalf("grants %d backwards %d repeats %d, want 3 0 0: %v", m.Grants, m.TokenBackwards, m.TokenRepeats, m.Violations)
	}
}

func TestTokensBackwardsCaught(t *testing.T) {
	m := checkEvents([]history.Event{
		grant("a", "k", "o1", 5, 0, 1),
		grant("b", "k", "o2", 3, 2, 3), // asked after token 5 was returned
	})
	if m.TokenBackwards != 1 {
		t.Fatalf("backwards %d, want 1", m.TokenBackwards)
	}
}

func TestTokensRepeatCaught(t *testing.T) {
	m := checkEvents([]history.Event{
		grant("a", "k", "o1", 5, 0, 1),
		grant("b", "k", "o2", 5, 0, 1),
		grant("b", "other", "o2", 5, 0, 1), // another key may reuse it
	})
	if m.TokenRepeats != 1 {
		t.Fatalf("repeats %d, want 1", m.TokenRepeats)
	}
}

func fw(kind, key, owner string, tok uint64, t int64) history.Event {
	return history.Event{Src: "res", Kind: kind, Key: key, Owner: owner, Token: tok, T: t * ms, Req: owner + "-" + key + "-" + string(rune('a'+t))}
}

func TestFenceExactCheck(t *testing.T) {
	ok := checkEvents([]history.Event{
		fw(history.EvAdmit, "k", "o1", 1, 1),
		fw(history.EvAdmit, "k", "o1", 1, 2),
		fw(history.EvAdmit, "k", "o2", 2, 3),
		fw(history.EvFenced, "k", "o1", 1, 4),
	})
	if ok.StaleAccepted != 0 || ok.Saves != 1 || ok.FalseRefusals != 0 || ok.Linearizable != "Ok" {
		t.Fatalf("clean history: stale %d saves %d false %d porcupine %s: %v", ok.StaleAccepted, ok.Saves, ok.FalseRefusals, ok.Linearizable, ok.Violations)
	}
	bad := checkEvents([]history.Event{
		fw(history.EvAdmit, "k", "o1", 1, 1),
		fw(history.EvAdmit, "k", "o2", 2, 2),
		fw(history.EvAdmit, "k", "o1", 1, 3),  // stale
		fw(history.EvAdmit, "k", "o3", 2, 4),  // the same token from another grant
		fw(history.EvFenced, "k", "o2", 2, 5), // the current holder refused
	})
	if bad.StaleAccepted != 2 || bad.FalseRefusals != 1 {
		t.Fatalf("stale %d (want 2), false refusals %d (want 1): %v", bad.StaleAccepted, bad.FalseRefusals, bad.Violations)
	}
	if bad.Linearizable != "Illegal" {
		t.Fatalf("porcupine %s, want Illegal", bad.Linearizable)
	}
}

// TestPorcupineSeesHolderOrder: a stale write that the holders saw happen
// after the newer one completed is not linearizable, whatever order the
// resource logged.
func TestPorcupineSeesHolderOrder(t *testing.T) {
	w := func(owner string, tok uint64, t0, t1 int64, req string) history.Event {
		return history.Event{Src: owner, Kind: history.EvFWrite, Key: "k", Owner: owner, Token: tok, T0: t0 * ms, T: t1 * ms, Req: req, Status: 204}
	}
	d := func(owner string, tok uint64, t int64, req string) history.Event {
		return history.Event{Src: "res", Kind: history.EvAdmit, Key: "k", Owner: owner, Token: tok, T: t * ms, Req: req}
	}
	if r := check.Linearizable([]history.Event{
		w("o2", 2, 0, 2, "r2"), d("o2", 2, 1, "r2"),
		w("o1", 1, 3, 5, "r1"), d("o1", 1, 4, "r1"),
	}, 0); r != "Illegal" {
		t.Fatalf("stale write admitted after a newer one: %s, want Illegal", r)
	}
	if r := check.Linearizable([]history.Event{
		w("o2", 2, 0, 5, "r2"), d("o2", 2, 4, "r2"),
		w("o1", 1, 1, 3, "r1"), d("o1", 1, 2, "r1"),
	}, 0); r != "Ok" {
		t.Fatalf("concurrent writes that linearize in token order: %s, want Ok", r)
	}
}

func TestOpsAfterLossAndDeadline(t *testing.T) {
	start := history.Event{Src: "h", Kind: history.EvStart, Note: "pid=1 rate=1"}
	renew := func(t0, t int64) history.Event {
		return history.Event{Src: "h", Kind: history.EvStoreRenew, Key: "k", Owner: "o", Token: 1, T0: t0 * ms, T: t * ms}
	}
	op := func(t0 int64) history.Event {
		return history.Event{Src: "h", Kind: history.EvOp, Key: "k", Owner: "o", Token: 1, T0: t0 * ms, T: (t0 + 1) * ms}
	}
	ok := checkEvents([]history.Event{start, grant("h", "k", "o", 1, 0, 1), op(10), renew(300, 301), op(1200)})
	if ok.Ops != 2 || ok.OpsAfterLoss != 0 || ok.OpsAfterDeadline != 0 {
		t.Fatalf("ops %d after loss %d after deadline %d, want 2 0 0: %v", ok.Ops, ok.OpsAfterLoss, ok.OpsAfterDeadline, ok.Violations)
	}
	late := checkEvents([]history.Event{start, grant("h", "k", "o", 1, 0, 1), op(10), op(1000)})
	if late.OpsAfterDeadline != 1 {
		t.Fatalf("an op 1 s after the only grant of a 1 s lease: after deadline %d, want 1", late.OpsAfterDeadline)
	}
	lost := checkEvents([]history.Event{start, grant("h", "k", "o", 1, 0, 1),
		{Src: "h", Kind: history.EvLost, Key: "k", Owner: "o", Token: 1, T: 50 * ms}, op(60)})
	if lost.OpsAfterLoss != 1 {
		t.Fatalf("an op after the loss signal: after loss %d, want 1", lost.OpsAfterLoss)
	}
}

func TestCounterLostUpdatesAndOverlaps(t *testing.T) {
	rd := func(owner, req string, val, t int64) history.Event {
		return history.Event{Src: "res", Kind: history.EvRead, Key: "k", Owner: owner, Req: req, Val: val, T: t * ms}
	}
	wr := func(owner, req string, val, t int64) history.Event {
		return history.Event{Src: "res", Kind: history.EvCWrite, Key: "k", Owner: owner, Req: req, Val: val, T: t * ms}
	}
	ok := checkEvents([]history.Event{rd("a", "1", 0, 1), wr("a", "1", 1, 2), rd("b", "2", 1, 3), wr("b", "2", 2, 4)})
	if ok.LostUpdates != 0 || ok.Overlaps != 0 {
		t.Fatalf("serial increments: lost %d overlaps %d", ok.LostUpdates, ok.Overlaps)
	}
	bad := checkEvents([]history.Event{rd("a", "1", 0, 1), rd("b", "2", 0, 2), wr("b", "2", 1, 3), wr("a", "1", 1, 4)})
	if bad.LostUpdates != 1 || bad.Overlaps != 2 {
		t.Fatalf("interleaved increments: lost %d (want 1) overlaps %d (want 2)", bad.LostUpdates, bad.Overlaps)
	}
}

func TestTakeoverAndStuck(t *testing.T) {
	acq := func(src, owner string, tok uint64, t int64) []history.Event {
		return []history.Event{
			grant(src, "k", owner, tok, t-1, t),
			{Src: src, Kind: history.EvAcquired, Key: "k", Owner: owner, Token: tok, T0: (t - 1) * ms, T: t * ms},
		}
	}
	var evs []history.Event
	evs = append(evs, acq("h1", "o1", 1, 10)...)
	evs = append(evs, history.Event{Src: "harness", Kind: history.EvFault, Fault: "F3", Phase: "on", Target: "h1", T: 100 * ms},
		history.Event{Src: "harness", Kind: history.EvFault, Fault: "F3", Phase: "off", Target: "h1", T: 101 * ms})
	evs = append(evs, acq("h2", "o2", 2, 1100)...)
	evs = append(evs, fw(history.EvAdmit, "k", "o2", 2, 1200), fw(history.EvAdmit, "j", "o2", 2, 50))
	m := check.Run(evs, check.Params{TTL: time.Second, QuietFrom: 1000 * ms, End: 2000 * ms})
	if len(m.Takeovers) != 1 || math.Abs(m.Takeovers[0]-1.0) > 1e-9 {
		t.Fatalf("takeovers %v, want [1.0]", m.Takeovers)
	}
	if len(m.Stuck) != 1 || !strings.HasPrefix(m.Stuck[0], "j ") {
		t.Fatalf("stuck %v, want key j (no progress after the quiet point)", m.Stuck)
	}
	if m.DoubleGrants != 0 {
		t.Fatalf("double grants %d after the first holder's deadline: %v", m.DoubleGrants, m.Violations)
	}
}

func TestConcurrentHoldersCaught(t *testing.T) {
	evs := []history.Event{
		grant("h1", "k", "o1", 1, 0, 1),
		{Src: "h1", Kind: history.EvAcquired, Key: "k", Owner: "o1", Token: 1, T: 1 * ms},
		grant("h2", "k", "o2", 2, 400, 401),
		{Src: "h2", Kind: history.EvAcquired, Key: "k", Owner: "o2", Token: 2, T: 401 * ms},
	}
	if m := checkEvents(evs); m.DoubleGrants != 1 {
		t.Fatalf("a grant 0.4 s into another's 1 s lease: double grants %d, want 1", m.DoubleGrants)
	}
	released := append([]history.Event{{Src: "h1", Kind: history.EvStoreRelease, Key: "k", Owner: "o1", Token: 1, T0: 300 * ms, T: 450 * ms}}, evs...)
	if m := checkEvents(released); m.DoubleGrants != 0 {
		t.Fatalf("a grant after the release was sent: double grants %d, want 0: %v", m.DoubleGrants, m.Violations)
	}
}

// The azblob F17 run (issue 31): the harness halted the stepped holder
// h3.3 1.3 s after its last renewal of k4; on its way out h3.3 released k4
// (the store logged it), but was gone before it recorded the release's
// return; h1.1 then got k4. The halt mark ends h3.3's holds.
func TestHaltEndsHolds(t *testing.T) {
	evs := []history.Event{
		{Src: "harness", Kind: history.EvMark, Target: "h3", Note: check.HaltMark, T: 100 * ms},
		grant("h3", "k", "o3", 1, 0, 10),
		{Src: "h3", Kind: history.EvAcquired, Key: "k", Owner: "o3", Token: 1, T: 10 * ms},
		{Src: "h3", Kind: history.EvStoreRenew, Key: "k", Owner: "o3", Token: 1, T0: 20 * ms, T: 50 * ms},
		grant("h1", "k", "o1", 2, 120, 300),
		{Src: "h1", Kind: history.EvAcquired, Key: "k", Owner: "o1", Token: 2, T: 300 * ms},
	}
	if m := checkEvents(evs); m.DoubleGrants != 0 || len(m.Violations) != 0 {
		t.Fatalf("a grant after the holder's halt: double grants %d, want 0: %v", m.DoubleGrants, m.Violations)
	}
	evs[0].T = 400 * ms // halted after the other's grant: still caught
	if m := checkEvents(evs); m.DoubleGrants != 1 {
		t.Fatalf("a grant before the holder's halt: double grants %d, want 1", m.DoubleGrants)
	}
	evs[0].T, evs[0].Note = 100*ms, "spawn" // another mark ends nothing
	if m := checkEvents(evs); m.DoubleGrants != 1 {
		t.Fatalf("a grant after a mark that is not a halt: double grants %d, want 1", m.DoubleGrants)
	}
}

func TestQuantile(t *testing.T) {
	xs := []float64{5, 1, 4, 2, 3}
	if q := check.Quantile(xs, 0.5); q != 3 {
		t.Fatalf("median %v", q)
	}
	if q := check.Quantile(xs, 0.99); q != 5 {
		t.Fatalf("p99 %v", q)
	}
	if !math.IsNaN(check.Quantile(nil, 0.5)) {
		t.Fatal("quantile of nothing is not NaN")
	}
}

// TestTakeoverDuringStall: a takeover that a machine-wide stall overlapped
// is reported apart, not held against the store's bound.
func TestTakeoverDuringStall(t *testing.T) {
	evs := []history.Event{
		grant("h1", "k", "o1", 1, 9, 10),
		{Src: "h1", Kind: history.EvAcquired, Key: "k", Owner: "o1", Token: 1, T0: 9 * ms, T: 10 * ms},
		{Src: "harness", Kind: history.EvFault, Fault: "F3", Phase: "on", Target: "h1", T: 100 * ms},
		{Src: "harness", Kind: history.EvFault, Fault: "F3", Phase: "off", Target: "h1", T: 101 * ms},
		{Src: "harness", Kind: history.EvStall, T0: 500 * ms, T: 1300 * ms},
		grant("h2", "k", "o2", 2, 1899, 1900),
	}
	m := checkEvents(evs)
	if len(m.Takeovers) != 0 || len(m.TakeoversStalled) != 1 || m.Stalls != 1 {
		t.Fatalf("takeovers %v, stalled %v, stalls %d; want none, one, 1", m.Takeovers, m.TakeoversStalled, m.Stalls)
	}
}

// F5c: an episode bites when the holder whose granted acquire's reply was
// dropped wins the same key again before its held requests reach the
// store.
func TestLateCleanupBite(t *testing.T) {
	episode := func(win history.Event, lostErr string) []history.Event {
		lost := grant("h1", "k", "o1", 0, 90, 300)
		lost.Err = lostErr
		return []history.Event{
			{Src: "harness", Kind: history.EvFault, Fault: "F5c", Phase: "on", Target: "h1", T: 50 * ms},
			{Src: "h1", Kind: history.EvStoreAcquire, Key: "k", Owner: "o1", Err: `leasehold: key "k" is held by h2`, T0: 95 * ms, T: 101 * ms},
			lost,
			win,
			{Src: "harness", Kind: history.EvMark, Target: "h1", Note: "F5c: reply dropped", T0: 100 * ms, T: 500 * ms},
			{Src: "harness", Kind: history.EvFault, Fault: "F5c", Phase: "off", Target: "h1", T: 900 * ms},
		}
	}
	for _, c := range []struct {
		name      string
		evs       []history.Event
		bit, same int
	}{
		{"retry_wins_before_delivery", episode(grant("h1", "k", "o1", 7, 310, 320), "leasehold: postgres store: acquire: reset"), 1, 1},
		{"fresh_owner_wins", episode(grant("h1", "k", "o2", 7, 310, 320), "leasehold: postgres store: acquire: reset"), 1, 0},
		{"win_after_delivery", episode(grant("h1", "k", "o1", 7, 450, 510), "leasehold: postgres store: acquire: reset"), 0, 0},
		{"other_key", episode(grant("h1", "k2", "o1", 7, 310, 320), "leasehold: postgres store: acquire: reset"), 0, 0},
		{"another_holder_wins", episode(grant("h2", "k", "o3", 7, 310, 320), "leasehold: postgres store: acquire: reset"), 0, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			history.Sort(c.evs)
			m := checkEvents(c.evs)
			if m.Episodes["F5c"] != 1 || m.LateCleanups != c.bit || m.LateCleanupsSameOwner != c.same {
				t.Fatalf("episodes %d, bitten %d (same owner %d); want 1, %d (%d)", m.Episodes["F5c"], m.LateCleanups, m.LateCleanupsSameOwner, c.bit, c.same)
			}
		})
	}
}
