package faults_test

import (
	"strings"
	"testing"
	"time"

	"github.com/leasehold-go/leasehold/faults"
)

func result(store string, seed uint64, mutate func(*faults.Metrics)) *faults.RunResult {
	m := &faults.Metrics{Episodes: map[string]int{"F2": 2, "F3": 1}, Grants: 10, FencedWrites: 100, Ops: 100,
		Saves: 2, PauseSaves: 2, BittenPauses: 2, LostUpdates: 1, Takeovers: []float64{0.9}, Linearizable: "Ok"}
	if mutate != nil {
		mutate(m)
	}
	return &faults.RunResult{Store: store, Seed: seed, TTL: time.Second, Seconds: 60, SafeTokens: true, TakeoverBound: 4.0 / 3, Metrics: m}
}

func TestAggregateAndMarkdown(t *testing.T) {
	bad := result("redis", 2, func(m *faults.Metrics) { m.StaleAccepted = 1 })
	bad.Missed = []string{"stale writes accepted: 1"}
	slow := result("etcd", 3, func(m *faults.Metrics) { m.Takeovers = []float64{3} })
	mut := &faults.RunResult{Store: "sqlite", Seed: 9, Mutation: true, Metrics: &faults.Metrics{StaleAccepted: 4}}
	sums := faults.Aggregate([]*faults.RunResult{result("sqlite", 1, nil), mut, bad, slow}, map[string][]string{"postgres-lease": {"seed 4: start postgres: boom"}})
	if len(sums) != 4 {
		t.Fatalf("%d summaries", len(sums))
	}
	byName := map[string]*faults.StoreSummary{}
	for _, s := range sums {
		byName[s.Store] = s
	}
	if s := byName["sqlite"]; s.Failed() || s.MutationCaught != 1 {
		t.Fatalf("sqlite: failed %v caught %d: %v", s.Failed(), s.MutationCaught, s.Missed)
	}
	if !byName["redis"].Failed() || !byName["etcd"].Failed() || !byName["postgres-lease"].Failed() {
		t.Fatal("a store with a stale write, one above its takeover bound and one that did not start must fail")
	}
	md := faults.Markdown(sums, nil, "short", "./scripts/faults --short", time.Unix(0, 0))
	for _, want := range []string{
		"| sqlite | yes | 0 of 100 fenced writes (1 x 60 s, seed 1)",
		"1 of 1 runs (4 stale writes admitted, seed 9)",
		"**misses**: seed 2: stale writes accepted: 1",
		"takeover p99 3.00 x TTL above the bound 1.33",
		"could not run: seed 4: start postgres: boom",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q", want)
		}
	}
	if t.Failed() {
		t.Log(md)
	}
}
