package leasehold

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestEventHeapOrder sets, moves and removes events at random and checks
// that pops come out in time order and that every position is kept.
func TestEventHeapOrder(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var h eventHeap
	evs := make([]event, 300)
	at := make(map[*event]int64)
	for step := 0; step < 5000; step++ {
		e := &evs[r.IntN(len(evs))]
		switch r.IntN(4) {
		case 0:
			if e.pos != 0 {
				h.remove(e)
				delete(at, e)
			}
		default:
			v := r.Int64N(1000)
			h.set(e, v)
			at[e] = v
		}
		for i, x := range h {
			if x.e.pos != i+1 || x.at != at[x.e] {
				t.Fatalf("step %d: entry %d has pos %d, time %d; want %d, %d", step, i, x.e.pos, x.at, i+1, at[x.e])
			}
		}
	}
	want := make([]int64, 0, len(at))
	for _, v := range at {
		want = append(want, v)
	}
	slices.Sort(want)
	for i, w := range want {
		if got := at[h.pop()]; got != w {
			t.Fatalf("pop %d: time %d, want %d", i, got, w)
		}
	}
	if len(h) != 0 {
		t.Fatalf("%d entries left after popping all", len(h))
	}
}
