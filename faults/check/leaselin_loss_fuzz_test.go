package check_test

import (
	"strings"
	"testing"
	"time"

	"github.com/leasehold-go/leasehold/faults/check"
	"github.com/leasehold-go/leasehold/faults/history"
)

// lossVerdict checks evs with F9b declared (see leaseVerdict for the bound).
func lossVerdict(evs []history.Event) check.LeaseVerdict {
	evs = append([]history.Event(nil), evs...)
	history.Sort(evs)
	return check.LeaseHistoryLoss(evs, hold, 60*time.Second, check.LeaseLoss{TTL: simTTL * time.Millisecond, Faults: []string{check.F9b}})
}

// around is an episode of fault from 1 ms before t to 1 ms after it.
func around(fault string, t int64) []history.Event {
	return []history.Event{
		{Src: "harness", Kind: history.EvFault, Fault: fault, Phase: "on", Target: "store", T: t - ms},
		{Src: "harness", Kind: history.EvFault, Fault: fault, Phase: "off", Target: "store", T: t + ms},
	}
}

// FuzzLeaseLoss: the allowances of a declared loss fault only add: a
// correct store's history with an F9b episode anywhere is still Ok. A
// foreign grant inside a live lease stays Illegal, naming the key, in the
// window of a fault the store did not declare (F11), and in a declared
// one's when its token is below the live grant's.
//
// Run it alone: go test -run '^$' -fuzz '^FuzzLeaseLoss$' -fuzztime 30s ./check
func FuzzLeaseLoss(f *testing.F) {
	f.Add([]byte{0, 1, 1, 2, 4, 3, 8, 200, 2, 9, 0xc0, 5, 61, 255, 1, 3}, uint16(40))
	f.Add([]byte("a lease history, three holders and a key"), uint16(0))
	f.Add([]byte{0, 0, 0x3c, 0, 1, 0, 0xc1, 10, 2, 40, 6, 0}, uint16(9000))
	f.Fuzz(func(t *testing.T, data []byte, at uint16) {
		if len(data) > 4096 {
			data = data[:4096]
		}
		s := simulate(data)
		ep := around(check.F9b, (1000+int64(at))*ms)
		if v := lossVerdict(append(append([]history.Event(nil), s.evs...), ep...)); v.Result != "Ok" && v.Result != "" {
			t.Fatalf("a correct store's history with a declared episode: %+v\n%s", v, dump(s.evs))
		}
		bad, ok := s.foreignGrant()
		if !ok {
			return
		}
		z := &bad[len(bad)-1]
		cases := map[string][]history.Event{"an undeclared fault's window": append(bad, around(check.F11, z.T)...)}
		low := append([]history.Event(nil), bad...)
		// below the live grant's token, called after that grant returned
		// (at its return, the two could linearize the other way round)
		low[len(low)-1].Token -= 2
		low[len(low)-1].T0 += ms
		low[len(low)-1].T += ms
		cases["a declared window, a token below the live grant's"] = append(low, around(check.F9b, z.T)...)
		for name, evs := range cases {
			if v := lossVerdict(evs); v.Result != "Illegal" || len(v.Illegal) != 1 || !strings.HasPrefix(v.Illegal[0], "k: ") {
				t.Fatalf("a foreign grant inside a live lease, %s: %+v\n%s", name, v, dump(evs))
			}
		}
	})
}
