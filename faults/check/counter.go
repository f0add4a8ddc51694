package check

import (
	"sort"

	"github.com/leasehold-go/leasehold/faults/history"
)

// checkCounter is W1: lost updates (acknowledged increments the final value
// does not contain) and overlapping read-modify-writes by different grants.
func checkCounter(evs []history.Event, m *Metrics) {
	type span struct {
		owner      string
		start, end int64
	}
	reads := map[string]history.Event{} // by request id
	spans := map[string][]span{}
	writes := map[string]int{}
	final := map[string]int64{}
	for _, e := range evs {
		switch e.Kind {
		case history.EvRead:
			reads[e.Req] = e
		case history.EvCWrite:
			writes[e.Key]++
			final[e.Key] = e.Val
			m.CounterWrites++
			if r, ok := reads[e.Req]; ok {
				spans[e.Key] = append(spans[e.Key], span{e.Owner, r.T, e.T})
			}
		}
	}
	for k, n := range writes {
		m.LostUpdates += n - int(final[k])
	}
	for _, ss := range spans {
		sort.Slice(ss, func(i, j int) bool { return ss[i].start < ss[j].start })
		hit := make([]bool, len(ss))
		for i := range ss {
			for j := i + 1; j < len(ss) && ss[j].start < ss[i].end; j++ {
				if ss[j].owner != ss[i].owner {
					hit[i], hit[j] = true, true
				}
			}
		}
		for _, x := range hit {
			if x {
				m.Overlaps++
			}
		}
	}
}
