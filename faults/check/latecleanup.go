package check

import (
	"strings"

	"github.com/leasehold-go/leasehold/faults/history"
)

// LateMark starts the note of the harness's mark after each F5c episode
// (its T0: when the reply was dropped; its T: when the held requests were
// delivered), from which the checkers count the episodes that bit.
const LateMark = "F5c: "

// LateBit reports whether holder src, after an acquire that was in flight
// when its reply was dropped (at dropped) failed (not with "held": the
// dropped reply granted the key), won the same key again
// with an acquire sent after that failure and answered before the delayed
// requests reached the store (at delivered); same reports that the winning
// acquire used the lost one's owner id.
func LateBit(evs []history.Event, src string, dropped, delivered int64) (bit, same bool) {
	if dropped == 0 || delivered == 0 {
		return false, false
	}
	for _, lost := range evs {
		if lost.Src != src || lost.Kind != history.EvStoreAcquire || lost.Err == "" || strings.Contains(lost.Err, " is held") ||
			lost.T0 > dropped || lost.T < dropped {
			continue
		}
		for _, e := range evs {
			if e.Src == src && e.Kind == history.EvStoreAcquire && e.Err == "" && e.Token != 0 && e.Key == lost.Key &&
				e.T0 >= lost.T && e.T <= delivered {
				return true, e.Owner == lost.Owner
			}
		}
	}
	return false, false
}

// checkLateCleanup counts the F5c episodes that bit, from the harness's
// marks and the holder's store calls.
func checkLateCleanup(evs []history.Event, ep episode, m *Metrics) {
	for _, e := range evs {
		if e.Kind != history.EvMark || e.Target != ep.target || !strings.HasPrefix(e.Note, LateMark) || e.T0 < ep.on || e.T0 > ep.off {
			continue
		}
		if bit, same := LateBit(evs, ep.target, e.T0, e.T); bit {
			m.LateCleanups++
			if same {
				m.LateCleanupsSameOwner++
			}
		}
	}
}
