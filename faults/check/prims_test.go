package check_test

import (
	"strings"
	"testing"
	"time"

	"github.com/leasehold-go/leasehold/faults/check"
	"github.com/leasehold-go/leasehold/faults/history"
)

// held records one hold: its grant returned at start (ms) and it ended
// (as its holder saw it) at end; end < 0: never released.
func held(src, mode, key string, tok, epoch uint64, start, end int64) []history.Event {
	evs := []history.Event{{Src: src, Kind: history.EvAcquired, Note: mode, Key: key, Token: tok, Val: int64(epoch), T0: start*ms - 5*ms, T: start * ms}}
	if end >= 0 {
		evs = append(evs, history.Event{Src: src, Kind: history.EvReleased, Note: mode, Key: key, Token: tok, T0: end * ms, T: end*ms + ms})
	}
	return evs
}

func cat(parts ...[]history.Event) []history.Event {
	var out []history.Event
	for _, p := range parts {
		out = append(out, p...)
	}
	history.Sort(out)
	return out
}

func admit(key string, tok, hi uint64, t int64) history.Event {
	return history.Event{Src: "res", Kind: history.EvAdmit, Key: key, Token: tok, Highest: hi, T: t * ms}
}

func fenced(key string, tok, hi uint64, t int64) history.Event {
	return history.Event{Src: "res", Kind: history.EvFenced, Key: key, Token: tok, Highest: hi, T: t * ms}
}

// killAt is an F3 episode on src: the SIGKILL sent at t, the process seen
// dead 20 ms later.
func killAt(src string, t int64) []history.Event {
	return []history.Event{
		{Src: "harness", Kind: history.EvFault, Fault: check.F3, Phase: "on", Target: src, T: t * ms},
		{Src: "harness", Kind: history.EvFault, Fault: check.F3, Phase: "off", Target: src, T: (t + 20) * ms},
	}
}

func judgePrim(workload string, mutation bool, evs []history.Event) *check.PrimResult {
	r := &check.PrimResult{Workload: workload, Slots: 3, Mutation: mutation, Episodes: map[string]int{check.F2: 1}, StarveBound: time.Second}
	check.Prims(evs, 10_000*ms, r)
	check.JudgePrims(r, true)
	return r
}

func TestPrims(t *testing.T) {
	const s0, s1, s2, s3 = "sem/slot/0", "sem/slot/1", "sem/slot/2", "sem/slot/3"
	tests := []struct {
		name     string
		workload string
		mutation bool
		evs      []history.Event
		missed   string // "" : the run passes; else a substring of its misses
		caught   bool
	}{
		{"W8 a slot's token repeated", "W8", false, cat(
			held("a", "permit", s0, 1, 0, 0, 100), held("b", "permit", s1, 1, 0, 10, 90), held("c", "permit", s2, 1, 0, 20, 100),
			held("d", "permit", s0, 2, 0, 100, 200),                 // a released at 100
			held("e", "permit", s1, 1, 0, 95, -1), killAt("e", 150), // b held token 1 on s1 before
			held("f", "permit", s1, 2, 0, 150, 160), // e killed at 150
			[]history.Event{admit(s0, 1, 0, 50), fenced(s0, 1, 2, 120), admit(s0, 2, 1, 130)},
		), "tokens not increasing: 1", false},
		{"W8 passes", "W8", false, cat(
			held("a", "permit", s0, 1, 0, 0, 100), held("b", "permit", s1, 1, 0, 10, 90), held("c", "permit", s2, 1, 0, 20, 100),
			held("d", "permit", s0, 2, 0, 100, 200),
			held("e", "permit", s1, 2, 0, 95, -1), killAt("e", 150),
			held("f", "permit", s1, 3, 0, 150, 160),
			[]history.Event{admit(s0, 1, 0, 50), fenced(s0, 1, 2, 120), admit(s0, 2, 1, 130)},
		), "", false},
		{"W8 over-admission: four holders of three slots", "W8", false, cat(
			held("a", "permit", s0, 1, 0, 0, 100), held("b", "permit", s1, 1, 0, 10, 100), held("c", "permit", s2, 1, 0, 20, 100),
			held("d", "permit", s3, 1, 0, 50, 60),
		), "more than 3 holders at once: 1", false},
		{"W8 a killed holder's hold lasts until its kill", "W8", false, cat(
			held("a", "permit", s0, 1, 0, 0, -1), killAt("a", 300),
			held("b", "permit", s0, 2, 0, 200, 400),
		), "a slot held twice at once: 1", false},
		{"W8 a slot freed by the kill itself (advisory locks) is no overlap", "W8", false, cat(
			held("a", "permit", s0, 1, 0, 0, -1), killAt("a", 300), // SIGKILL at 300, seen dead at 320
			held("b", "permit", s0, 2, 0, 310, 400),
		), "", false},
		{"W8 a stale write admitted", "W8", false, cat(
			held("a", "permit", s0, 1, 0, 0, 100), held("b", "permit", s0, 2, 0, 100, 200),
			[]history.Event{admit(s0, 2, 0, 150), admit(s0, 1, 2, 160)},
		), "stale writes admitted: 1", false},
		{"W8 mutation caught", "W8", true, cat(
			held("a", "permit", s0, 1, 0, 0, 100), held("b", "permit", s1, 1, 0, 10, 100), held("c", "permit", s2, 1, 0, 20, 100),
			held("d", "permit", s3, 1, 0, 50, 60),
		), "", true},
		{"W8 mutation not caught", "W8", true, cat(
			held("a", "permit", s0, 1, 0, 0, 100), held("b", "permit", s1, 1, 0, 10, 100),
		), "mutation NOT caught", false},
		{"W9 readers share, writers in turn", "W9", false, cat(
			held("r1", "read", "rw", 1, 1, 0, 100), held("r2", "read", "rw", 1, 2, 50, 150),
			held("w1", "write", "rw", 3, 3, 150, 250), held("w2", "write", "rw", 4, 4, 250, 300),
			held("r1", "read", "rw", 2, 5, 300, 400),
			[]history.Event{admit("rw:write", 3, 2, 200), fenced("rw:read", 2, 3, 210)},
		), "", false},
		{"W9 a reader with a writer", "W9", false, cat(
			held("r1", "read", "rw", 1, 1, 0, 100), held("w1", "write", "rw", 2, 2, 90, 200),
		), "holds overlapping a writer's: 1", false},
		{"W9 two writers", "W9", false, cat(
			held("w1", "write", "rw", 2, 2, 0, 100), held("w2", "write", "rw", 3, 3, 60, 200),
		), "holds overlapping a writer's: 1", false},
		{"W9 a starved writer", "W9", false, []history.Event{
			{Src: "w1", Kind: history.EvAcquired, Note: "write", Key: "rw", Token: 2, Val: 2, T0: 0, T: 5000 * ms},
		}, "a writer waited 5s", false},
		{"W9 no writer", "W9", false, cat(held("r1", "read", "rw", 1, 1, 0, 100)), "no writer got the lock", false},
		{"W9 mutation caught", "W9", true, cat(
			held("r1", "read", "rw", 1, 1, 0, 100), held("w1", "write", "rw", 2, 2, 90, 200),
		), "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := judgePrim(tt.workload, tt.mutation, tt.evs)
			got := strings.Join(r.Missed, "; ")
			if tt.missed == "" && got != "" || !strings.Contains(got, tt.missed) {
				t.Errorf("missed %q, want %q (holds %d, examples %v)", got, tt.missed, r.Holds, r.Examples)
			}
			if r.Caught != tt.caught {
				t.Errorf("caught %v, want %v", r.Caught, tt.caught)
			}
		})
	}
}

// TestPrimsRecorded judges the merged histories of real runs on the
// embedded store (faults prims -store sqlite -seed 7 -keep): W8 and W9
// pass, the same W8 history held to N = 2 is caught over-admitting (the
// check is not vacuous on real data), and both mutation runs (N+1 slots;
// writers that ignore readers; the fence off) are caught.
func TestPrimsRecorded(t *testing.T) {
	tests := []struct {
		file     string
		workload string
		slots    int
		mutation bool
		missed   string
	}{
		{"prims-sqlite-W8-seed7.jsonl", "W8", 3, false, ""},
		{"prims-sqlite-W8-seed7.jsonl", "W8", 2, false, "more than 2 holders at once"},
		{"prims-sqlite-W9-seed7.jsonl", "W9", 0, false, ""},
		{"prims-sqlite-W8-mutation-seed7.jsonl", "W8", 3, true, ""},
		{"prims-sqlite-W9-mutation-seed7.jsonl", "W9", 0, true, ""},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			evs, err := history.ReadFile("testdata/" + tt.file)
			if err != nil {
				t.Fatal(err)
			}
			r := &check.PrimResult{Workload: tt.workload, Slots: tt.slots, Mutation: tt.mutation, Episodes: map[string]int{}, StarveBound: 20 * time.Second}
			for _, e := range evs {
				if e.Kind == history.EvFault && e.Phase == "on" {
					r.Episodes[e.Fault]++
				}
			}
			check.Prims(evs, evs[len(evs)-1].T, r)
			check.JudgePrims(r, true)
			got := strings.Join(r.Missed, "; ")
			if tt.missed == "" && got != "" || !strings.Contains(got, tt.missed) {
				t.Errorf("missed %q, want %q", got, tt.missed)
			}
			if len(r.Invalid) > 0 || r.Caught != tt.mutation || r.Holds < 20 {
				t.Errorf("invalid %v, caught %v, holds %d", r.Invalid, r.Caught, r.Holds)
			}
			if !tt.mutation && r.StaleRefused == 0 {
				t.Errorf("no stale write refused: the pause did not bite")
			}
		})
	}
}
