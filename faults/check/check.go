package check

import (
	"math"
	"sort"
	"time"

	"github.com/leasehold-go/leasehold/faults/history"
)

// Run runs every checker over a run's merged history.
func Run(evs []history.Event, p Params) *Metrics {
	evs = append([]history.Event(nil), evs...)
	history.Sort(evs)
	m := &Metrics{Episodes: map[string]int{}, DoubleByFault: map[string]int{}}
	checkTokens(evs, m)
	checkFence(evs, m)
	m.Linearizable = Linearizable(evs, p.End)
	if m.Linearizable == "Illegal" {
		m.violate("porcupine: the fenced register's history is not linearizable against a register that admits only tokens >= the highest")
	}
	m.Lease = LeaseHistoryLoss(evs, time.Duration(holdFor(p)), 0, LeaseLoss{TTL: p.TTL, Faults: p.LossFaults})
	for _, k := range m.Lease.Illegal {
		m.violate("porcupine: the lease history of %s is not linearizable against a register of one live grant per key", k)
	}
	checkOps(evs, p, m)
	checkExclusion(evs, p, m)
	checkCounter(evs, m)
	checkFaults(evs, p, m)
	checkStuck(evs, p, m)
	return m
}

// Quantile returns the q-quantile (0..1) of sorted xs by the nearest-rank
// method, NaN for none.
func Quantile(xs []float64, q float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	i := int(math.Ceil(q*float64(len(s)))) - 1
	if i < 0 {
		i = 0
	}
	return s[i]
}
