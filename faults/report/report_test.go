package report_test

import (
	"strings"
	"testing"
	"time"

	"github.com/leasehold-go/leasehold/faults/check"
	"github.com/leasehold-go/leasehold/faults/report"
)

// stores are the harness's stores, in the order of its tables
// (harness.BackendNames).
var stores = []string{"sqlite", "redis", "redlock", "postgres-lease", "postgres-advisory", "etcd"}

func result(store string, seed uint64, mutate func(*check.Metrics)) *check.RunResult {
	m := &check.Metrics{Episodes: map[string]int{"F2": 2, "F3": 1}, Grants: 10, FencedWrites: 100, Ops: 100,
		Saves: 2, PauseSaves: 2, BittenPauses: 2, LostUpdates: 1, Takeovers: []float64{0.9}, Linearizable: "Ok"}
	if mutate != nil {
		mutate(m)
	}
	return &check.RunResult{Store: store, Seed: seed, TTL: time.Second, Seconds: 60, SafeTokens: true, TakeoverBound: 4.0 / 3, Metrics: m}
}

func TestAggregateAndMarkdown(t *testing.T) {
	bad := result("redis", 2, func(m *check.Metrics) { m.StaleAccepted = 1 })
	bad.Missed = []string{"stale writes accepted: 1"}
	slow := result("etcd", 3, func(m *check.Metrics) { m.Takeovers = []float64{3} })
	mut := &check.RunResult{Store: "sqlite", Seed: 9, Mutation: true, Metrics: &check.Metrics{StaleAccepted: 4}}
	sums := report.Aggregate([]*check.RunResult{result("sqlite", 1, nil), mut, bad, slow}, map[string][]string{"postgres-lease": {"seed 4: start postgres: boom"}}, stores)
	if len(sums) != 4 {
		t.Fatalf("%d summaries", len(sums))
	}
	byName := map[string]*report.StoreSummary{}
	for _, s := range sums {
		byName[s.Store] = s
	}
	if s := byName["sqlite"]; s.Failed() || s.MutationCaught != 1 {
		t.Fatalf("sqlite: failed %v caught %d: %v", s.Failed(), s.MutationCaught, s.Missed)
	}
	if !byName["redis"].Failed() || !byName["etcd"].Failed() || !byName["postgres-lease"].Failed() {
		t.Fatal("a store with a stale write, one above its takeover bound and one that did not start must fail")
	}
	wantMarkdown(t, sums,
		"| sqlite | yes | 0 of 100 fenced writes (1 x 60 s, seed 1)",
		"1 of 1 runs (4 stale writes admitted, seed 9)",
		"**misses**: seed 2: stale writes accepted: 1",
		"takeover p99 3.00 x TTL above the bound 1.33",
		"could not run: seed 4: start postgres: boom",
	)
}

// wantMarkdown checks that the report of sums holds every one of wants.
func wantMarkdown(t *testing.T, sums []*report.StoreSummary, wants ...string) {
	t.Helper()
	md := report.Markdown(sums, nil, "short", "./scripts/faults --short", time.Unix(0, 0))
	for _, want := range wants {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q", want)
		}
	}
	if t.Failed() {
		t.Log(md)
	}
}

func stallResult(seed uint64, unsafe bool, stale int) *check.StallResult {
	r := &check.StallResult{Store: "sqlite", Seed: seed, Unsafe: unsafe, Seconds: 10, Writers: 4, Keys: 2,
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
	good := []*check.StallResult{stallResult(7, false, 0), stallResult(7, true, 95)}
	safe, control, failed := report.StallVerdicts(good)
	if failed || !strings.Contains(safe, "no stale write landed") || !strings.Contains(control, "bit in 1 of 1 runs") {
		t.Fatalf("good pair: %q %q failed=%v", safe, control, failed)
	}
	md := report.Markdown(nil, good, "short", "./scripts/faults --short", time.Unix(0, 0))
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
	if safe, _, failed := report.StallVerdicts([]*check.StallResult{bad, stallResult(8, true, 3)}); !failed || !strings.Contains(safe, "**misses**: seed 8: W7: 2 stale") {
		t.Errorf("stale writes with the default options must fail the suite: %q failed=%v", safe, failed)
	}
	blind := stallResult(9, true, 0)
	blind.Invalid = []string{"W7 negative control: UnsafeConcurrent landed no stale write"}
	if _, control, failed := report.StallVerdicts([]*check.StallResult{stallResult(9, false, 0), blind}); !failed || !strings.Contains(control, "**invalid**") {
		t.Errorf("a negative control that did not bite must fail the suite: %q failed=%v", control, failed)
	}
	if md := report.Markdown(nil, nil, "short", "x", time.Unix(0, 0)); strings.Contains(md, "(W7)\n") {
		t.Error("a report without W7 runs has a W7 table")
	}
}

func TestLeaseHistoryCell(t *testing.T) {
	lease := func(res string, ops int, double int) func(*check.Metrics) {
		return func(m *check.Metrics) {
			m.Lease = check.LeaseVerdict{Result: res, Ops: ops, Keys: 2}
			if res == "Illegal" {
				m.Lease.Illegal = []string{"k1: 3 of 9 operations linearize"}
			}
			if res == "Unknown" {
				m.Lease.TimedOut = []string{"k2 (40000 operations)"}
			}
			m.DoubleGrants = double
		}
	}
	illegal := result("etcd", 2, lease("Illegal", 9, 0))
	check.Judge(illegal)
	overlap := result("redis", 5, lease("Illegal", 9, 3))
	check.Judge(overlap)
	if len(illegal.Missed) != 1 || !strings.Contains(illegal.Missed[0], "lease history not linearizable (porcupine): k1") {
		t.Fatalf("an Illegal lease history with no concurrent holder is not a missed target: %v", illegal.Missed)
	}
	// the concurrent holders' overlaps no longer excuse it: the check
	// allows only those of the store's declared loss faults
	if len(overlap.Missed) != 1 || !strings.Contains(overlap.Missed[0], "lease history not linearizable (porcupine): k1") {
		t.Fatalf("an Illegal lease history with concurrent holders is not a missed target: %v", overlap.Missed)
	}
	res := []*check.RunResult{
		result("sqlite", 1, lease("Ok", 300, 0)), result("sqlite", 2, lease("Unknown", 40000, 0)), result("sqlite", 3, nil),
		result("etcd", 1, lease("Ok", 100, 0)), illegal, overlap,
		result("redlock", 1, func(m *check.Metrics) {
			m.Lease = check.LeaseVerdict{Result: "Ok", Ops: 50, Keys: 2, Loss: []string{check.F9, check.F9m}}
		}),
	}
	wantMarkdown(t, report.Aggregate(res, nil, stores),
		"| lease history (porcupine) | verdict |",
		"| Ok in 1 of 2 runs, timed out in 1 (20s per key) over 40,300 operations; 1 runs recorded before the check |",
		"| Ok in 1 of 2 runs, **Illegal** in 1 (0 of them also concurrent holders) over 109 operations | **misses**: seed 2: lease history not linearizable",
		"| Ok in 0 of 1 runs, **Illegal** in 1 (1 of them also concurrent holders) over 9 operations | **misses**: seed 5: lease history not linearizable",
		"seed 2: k2 (40000 operations)",
		"over 50 operations. the store's design may end a grant early under F9, F9m (an acquire",
		"each key gets 20s",
	)
}
