package check_test

import (
	"testing"

	"github.com/leasehold-go/leasehold/faults/history"
)

// TestOpsDeadlineByClockRate: a holder whose clock is off by no more than
// Rho (the design's claim, 1 % by default) is held to the true clock's
// deadline; one beyond it (F12's 40 % slow clock) or with no rate in its
// start note is not, since its own deadline lies elsewhere by design.
func TestOpsDeadlineByClockRate(t *testing.T) {
	for _, tc := range []struct {
		note string
		want int
	}{
		{"pid=1 rate=1", 1},
		{"pid=1 rate=0.995", 1},
		{"pid=1 rate=1.01", 1},
		{"pid=1 rate=0.995 wallshift=0s", 1},
		{"pid=1 rate=0.6", 0},
		{"pid=1 rate=1.2", 0},
		{"pid=1", 0},
		{"pid=1 rate=x", 0},
	} {
		start := history.Event{Src: "h", Kind: history.EvStart, Note: tc.note}
		op := history.Event{Src: "h", Kind: history.EvOp, Key: "k", Owner: "o", Token: 1, T0: 1000 * ms, T: 1001 * ms}
		m := checkEvents([]history.Event{start, grant("h", "k", "o", 1, 0, 1), op})
		if m.OpsAfterDeadline != tc.want {
			t.Errorf("%q: an op 1 s after the only grant of a 1 s lease: after deadline %d, want %d", tc.note, m.OpsAfterDeadline, tc.want)
		}
	}
}
