package check_test

import (
	"testing"

	"github.com/leasehold-go/leasehold/faults/history"
)

// A redis mutation run of the long mode (seed 8330, issue 31): h1.1 held
// k9, renewed it 215 ms before the run's end, made its last fenced write
// 11 ms before the end, and, its hold done, sent the release; the harness
// then killed every holder, one by one, and recorded the end kill 14 ms
// after h2.1 had been granted k9. h1.1's release never had its return
// recorded. The grant to h2.1 came after h1.1's last recorded event on k9
// and before the recorded kill: it may follow that release, and is not a
// proven concurrent holder. A grant before that last event is.
func TestEndKillEndsHolds(t *testing.T) {
	evs := func(lastOp, kill int64) []history.Event {
		return []history.Event{
			grant("h1", "k", "o1", 1, 0, 1),
			{Src: "h1", Kind: history.EvAcquired, Key: "k", Owner: "o1", Token: 1, T: 1 * ms},
			{Src: "h1", Kind: history.EvStoreRenew, Key: "k", Owner: "o1", Token: 1, T0: 600 * ms, T: 630 * ms},
			{Src: "h1", Kind: history.EvFWrite, Key: "k", Owner: "o1", Token: 1, T0: (lastOp - 1) * ms, T: lastOp * ms},
			grant("h2", "k", "o2", 2, 808, 815),
			{Src: "h2", Kind: history.EvAcquired, Key: "k", Owner: "o2", Token: 2, T: 815 * ms},
			{Src: "harness", Kind: history.EvEndKill, Target: "h0,h1,h2", T: kill * ms},
		}
	}
	if m := checkEvents(evs(804, 829)); m.DoubleGrants != 0 {
		t.Fatalf("a grant after the holder's last event, before the end kill: double grants %d, want 0: %v", m.DoubleGrants, m.Violations)
	}
	if m := checkEvents(evs(820, 829)); m.DoubleGrants != 1 {
		t.Fatalf("a grant before the holder's last event on the key: double grants %d, want 1", m.DoubleGrants)
	}
	notNamed := evs(804, 829)
	notNamed[len(notNamed)-1].Target = "h0,h2"
	if m := checkEvents(notNamed); m.DoubleGrants != 1 {
		t.Fatalf("a grant while a holder the end kill does not name held the key: double grants %d, want 1", m.DoubleGrants)
	}
}
