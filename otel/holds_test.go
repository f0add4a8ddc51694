package otel

import (
	"maps"
	"testing"
	"time"
)

func TestHoldsOldest(t *testing.T) {
	t0 := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	type op struct {
		add  bool
		l    lease
		sent int
	}
	for _, tc := range []struct {
		name          string
		ops           []op
		overall, keys map[string]time.Time
	}{
		{name: "nothing held", overall: map[string]time.Time{}, keys: map[string]time.Time{}},
		{name: "two keys",
			ops:     []op{{true, lease{"a", 1}, 5}, {true, lease{"b", 1}, 3}},
			overall: map[string]time.Time{"": at(3)}, keys: map[string]time.Time{"a": at(5), "b": at(3)}},
		{name: "ended leases are forgotten",
			ops:     []op{{true, lease{"a", 1}, 1}, {true, lease{"a", 2}, 4}, {false, lease{"a", 1}, 0}},
			overall: map[string]time.Time{"": at(4)}, keys: map[string]time.Time{"a": at(4)}},
		{name: "the same lease from two clients: the oldest ends first",
			ops:     []op{{true, lease{"a", 7}, 2}, {true, lease{"a", 7}, 6}, {false, lease{"a", 7}, 0}},
			overall: map[string]time.Time{"": at(6)}, keys: map[string]time.Time{"a": at(6)}},
		{name: "an end before its grant: the grant is never counted",
			ops:     []op{{false, lease{"a", 1}, 0}, {true, lease{"b", 1}, 5}, {true, lease{"a", 1}, 2}},
			overall: map[string]time.Time{"": at(5)}, keys: map[string]time.Time{"b": at(5)}},
		{name: "an early end cancels one grant only",
			ops:     []op{{false, lease{"a", 1}, 0}, {true, lease{"a", 1}, 2}, {true, lease{"a", 1}, 3}},
			overall: map[string]time.Time{"": at(3)}, keys: map[string]time.Time{"a": at(3)}},
		{name: "a grant ended twice: the second end waits for another grant",
			ops:     []op{{true, lease{"a", 1}, 2}, {false, lease{"a", 1}, 0}, {false, lease{"a", 1}, 0}, {true, lease{"a", 1}, 4}},
			overall: map[string]time.Time{}, keys: map[string]time.Time{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var h holds
			for _, o := range tc.ops {
				if o.add {
					h.add(o.l, at(o.sent))
				} else {
					h.remove(o.l)
				}
			}
			if got := h.oldest(false); !maps.Equal(got, tc.overall) {
				t.Errorf("oldest overall %v, want %v", got, tc.overall)
			}
			if got := h.oldest(true); !maps.Equal(got, tc.keys) {
				t.Errorf("oldest by key %v, want %v", got, tc.keys)
			}
		})
	}
}

// TestHoldsForgetsTheOldestEarlyEnds: ends that never meet their grants
// are kept up to maxEarly, the oldest forgotten first.
func TestHoldsForgetsTheOldestEarlyEnds(t *testing.T) {
	var h holds
	for i := range maxEarly + 10 {
		h.remove(lease{"x", uint64(i)})
	}
	if len(h.order) != maxEarly || len(h.early) != maxEarly {
		t.Fatalf("%d ends kept (%d leases), want %d", len(h.order), len(h.early), maxEarly)
	}
	sent := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	h.add(lease{"x", 0}, sent)            // its end was forgotten: counted
	h.add(lease{"x", maxEarly + 9}, sent) // its end is kept: not counted
	if got := h.oldest(true); len(got) != 1 || len(h.since[lease{"x", 0}]) != 1 {
		t.Errorf("held %v, want only x/0", h.since)
	}
	if len(h.order) != maxEarly-1 || h.early[lease{"x", maxEarly + 9}] != 0 {
		t.Errorf("%d ends kept, want %d with x/%d's consumed", len(h.order), maxEarly-1, maxEarly+9)
	}
}
