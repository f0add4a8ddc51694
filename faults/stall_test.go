package faults_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/leasehold-go/leasehold/faults"
	"github.com/leasehold-go/leasehold/storeurl"
)

func land(key string, tok uint64, t int64) faults.Landing {
	return faults.Landing{Key: key, Token: tok, T: t * ms, Req: key + "-" + string(rune('a'+tok))}
}

func TestStaleLandingsInOrderPass(t *testing.T) {
	n, vs := faults.StaleLandings([]faults.Landing{
		land("k0", 1, 0),
		land("k0", 1, 1), // the same holder writing again
		land("k1", 1, 2), // another key has its own order
		land("k0", 3, 3),
		land("k1", 2, 4),
		land("k0", 5, 5),
	})
	if n != 0 || len(vs) != 0 {
		t.Fatalf("stale %d %v; want none", n, vs)
	}
}

// A stalled writer landing after a newer one must be counted, once per
// stale write, per key.
func TestStaleLandingsCountsLateWrites(t *testing.T) {
	n, vs := faults.StaleLandings([]faults.Landing{
		land("k0", 6, 0),
		land("k1", 2, 1),
		land("k0", 5, 40), // admitted before 6, stalled, landed after it
		land("k0", 4, 50), // below 6, not just below 5
		land("k1", 2, 60),
		land("k0", 7, 70),
		land("k0", 6, 80), // equal to an earlier write but below 7
	})
	if n != 3 || len(vs) != 3 {
		t.Fatalf("stale %d %v; want 3", n, vs)
	}
	if !strings.Contains(vs[0], "k0") || !strings.Contains(vs[0], "token 5 landed 40ms after") || !strings.Contains(vs[0], "token 6") {
		t.Errorf("first violation %q", vs[0])
	}
}

func runStall(t *testing.T, unsafe bool) *faults.StallResult {
	t.Helper()
	r, err := faults.RunStall(context.Background(), faults.StallConfig{
		Backend: &faults.SQLite{}, Open: storeurl.Open, Dir: t.TempDir(),
		Unsafe: unsafe, Duration: 3 * time.Second, Seed: 42, Log: t.Logf,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Log(faults.StallSummary(r))
	return r
}

// TestStallWorkload runs W7 end to end on the embedded store: through
// fence.Middleware with default options no stale write lands although
// stalls are overtaken by newer tokens; with UnsafeConcurrent (the negative
// control) stale writes land and the run says so.
func TestStallWorkload(t *testing.T) {
	if testing.Short() {
		t.Skip("runs writers for about 6 s")
	}
	safe := runStall(t, false)
	if safe.StaleLanded != 0 || len(safe.Missed) != 0 || len(safe.Invalid) != 0 {
		t.Errorf("default options: %s", faults.StallSummary(safe))
	}
	if safe.Overtaken == 0 || safe.Landed == 0 {
		t.Errorf("default options: the stalls did not bite: %s", faults.StallSummary(safe))
	}
	unsafe := runStall(t, true)
	if unsafe.StaleLanded == 0 || len(unsafe.Invalid) != 0 || len(unsafe.Missed) != 0 {
		t.Errorf("UnsafeConcurrent: want stale writes and a valid run: %s", faults.StallSummary(unsafe))
	}
}

func stallResult(seed uint64, unsafe bool, stale int) *faults.StallResult {
	r := &faults.StallResult{Store: "sqlite", Seed: seed, Unsafe: unsafe, Seconds: 10, Writers: 4, Keys: 2,
		Sent: 300, Landed: 250, Stalls: 70, Overtaken: 60, StaleLanded: stale}
	if stale > 0 {
		r.Violations = []string{"W7 k0: write w1-2 with token 5 landed 40ms after write w2-3 with token 6"}
	}
	return r
}

// TestStallVerdictsAndMarkdown: the W7 rows of the report, and what fails
// the suite: a stale write with the default options, or a negative control
// that did not bite.
func TestStallVerdictsAndMarkdown(t *testing.T) {
	good := []*faults.StallResult{stallResult(7, false, 0), stallResult(7, true, 95)}
	safe, control, failed := faults.StallVerdicts(good)
	if failed || !strings.Contains(safe, "no stale write landed") || !strings.Contains(control, "bit in 1 of 1 runs") {
		t.Fatalf("good pair: %q %q failed=%v", safe, control, failed)
	}
	md := faults.Markdown(nil, good, "short", "./scripts/faults --short", time.Unix(0, 0))
	for _, want := range []string{
		"## fence.Middleware under stalled writers (W7)",
		"| W7 `fence.Middleware`, default options | 1 x 10 s, seed 7 | 300 / 250 | 70 (60) | 0 | meets the target: no stale write landed |",
		"| W7 `fence.Middleware`, `UnsafeConcurrent` (negative control) | 1 x 10 s, seed 7 | 300 / 250 | 70 (60) | 95 | bit in 1 of 1 runs",
		"embedded SQLite store only",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q", want)
		}
	}
	if t.Failed() {
		t.Log(md)
	}

	bad := stallResult(8, false, 2)
	bad.Missed = []string{"W7: 2 stale writes landed through fence.Middleware with default options"}
	if safe, _, failed := faults.StallVerdicts([]*faults.StallResult{bad, stallResult(8, true, 3)}); !failed || !strings.Contains(safe, "**misses**: seed 8: W7: 2 stale") {
		t.Errorf("stale writes with the default options must fail the suite: %q failed=%v", safe, failed)
	}
	blind := stallResult(9, true, 0)
	blind.Invalid = []string{"W7 negative control: UnsafeConcurrent landed no stale write"}
	if _, control, failed := faults.StallVerdicts([]*faults.StallResult{stallResult(9, false, 0), blind}); !failed || !strings.Contains(control, "**invalid**") {
		t.Errorf("a negative control that did not bite must fail the suite: %q failed=%v", control, failed)
	}
	if md := faults.Markdown(nil, nil, "short", "x", time.Unix(0, 0)); strings.Contains(md, "(W7)\n") {
		t.Error("a report without W7 runs has a W7 table")
	}
}
