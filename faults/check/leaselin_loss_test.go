package check_test

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/leasehold-go/leasehold/faults/check"
	"github.com/leasehold-go/leasehold/faults/history"
)

// episode is a fault's on and off events, at on and off ms.
func episode(fault string, on, off int64) []history.Event {
	return []history.Event{
		{Src: "harness", Kind: history.EvFault, Fault: fault, Phase: "on", Target: "store", T: on * ms},
		{Src: "harness", Kind: history.EvFault, Fault: fault, Phase: "off", Target: "store", T: off * ms},
	}
}

// overlap is b's grant 100 ms into a's, with the fault episodes eps.
func overlap(btoken uint64, eps ...[]history.Event) []history.Event {
	evs := []history.Event{acq("a", "oa", 5, 0, 10), acq("b", "ob", btoken, 100, 110)}
	for _, ep := range eps {
		evs = append(evs, ep...)
	}
	return evs
}

// TestLeaseHistoryLossFaults: under a fault the store declares it may
// lose a grant in, an acquire in the fault's window ([on - TTL, off + 3 x
// TTL], TTL 1 s here) may take over a live grant; nothing else changes.
func TestLeaseHistoryLossFaults(t *testing.T) {
	loss := []string{check.F9b, check.F11}
	cases := []struct {
		name string
		evs  []history.Event
		want string
	}{
		{"takeover in a declared fault's window", overlap(6, episode(check.F9b, 50, 60)), "Ok"},
		{"takeover a TTL before the fault starts", overlap(6, episode(check.F11, 1100, 1200)), "Ok"},
		{"takeover before the window", overlap(6, episode(check.F9b, 1200, 1300)), "Illegal"},
		{"takeover 3 TTLs after the fault ends", append(overlap(6), acq("c", "oc", 7, 3005, 3020), acq("d", "od", 8, 3008, 3030), episode(check.F9b, 0, 10)[0], episode(check.F9b, 0, 10)[1]), "Ok"},
		{"takeover past 3 TTLs after the fault ends", append(overlap(6, episode(check.F9b, 50, 60)), acq("c", "oc", 7, 3005, 3020), acq("d", "od", 8, 3065, 3080)), "Illegal"},
		{"takeover with no fault", overlap(6), "Illegal"},
		{"takeover in an undeclared fault's window", overlap(6, episode(check.F6, 50, 60)), "Illegal"},
		{"token regression in a declared fault's window", overlap(4, episode(check.F9b, 50, 60)), "Illegal"},
		{"token repeated in a declared fault's window", overlap(5, episode(check.F9b, 50, 60)), "Illegal"},
		{"the ended grant renewed after the takeover", append(overlap(6, episode(check.F9b, 50, 60)), renew("a", "oa", 5, 200, 210)), "Illegal"},
		{"the ended grant renewed before the takeover", append(overlap(6, episode(check.F9b, 50, 60)), renew("a", "oa", 5, 20, 150)), "Ok"},
		{"the ended grant's release is a no-op", append(overlap(6, episode(check.F9b, 50, 60)), rel("a", "oa", 5, 200, 210), renew("b", "ob", 6, 300, 310)), "Ok"},
		{"the new grant is exclusive again outside the window", append(overlap(6, episode(check.F9b, 50, 60)), acq("c", "oc", 7, 4200, 4210), renew("b", "ob", 6, 3900, 3910)), "Illegal"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			evs := append([]history.Event(nil), c.evs...)
			history.Sort(evs)
			v := check.LeaseHistoryLoss(evs, hold, 5*time.Second, check.LeaseLoss{TTL: time.Second, Faults: loss})
			if v.Result != c.want {
				t.Fatalf("verdict %q, want %q (illegal %v, timed out %v)", v.Result, c.want, v.Illegal, v.TimedOut)
			}
			if c.want == "Illegal" && (len(v.Illegal) != 1 || !strings.HasPrefix(v.Illegal[0], "k: ")) {
				t.Fatalf("the illegal key is not named: %v", v.Illegal)
			}
			// without the declaration, every overlap is a violation
			if v := check.LeaseHistory(evs, hold, 5*time.Second); v.Result != "Illegal" && strings.HasPrefix(c.name, "takeover in a declared") {
				t.Fatalf("undeclared: verdict %q, want Illegal", v.Result)
			}
		})
	}
}

// TestLeaseHistoryLossRuns replays one key of real runs of the long run
// that the lease-history check called Illegal, each at an overlap its
// store's design allows (the store events of the key from the run's start,
// or from a moment the key was free, to past the overlap, without the
// refusals, and the fault episodes; extracted from
// /work/wt/_data/long1-runs/<store>-run-<seed>/history.jsonl):
// Ok with the store's declared loss faults, Illegal without them or with
// another store's.
func TestLeaseHistoryLossRuns(t *testing.T) {
	cases := []struct {
		file, key string
		loss      []string
		wrong     [][]string // other declarations, each too little
	}{
		// F17: h3.1's wall clock stepped, it read h0.1's lease as expired
		{"lease-sqlite-run4009-k0.jsonl", "k0", []string{check.F17}, [][]string{{check.F9b, check.F11}}},
		// F9m: a master restarted empty, h0.1 won a majority over h1.1's lock
		{"lease-redlock-run4007-k7.jsonl", "k7", []string{check.F9, check.F9m}, [][]string{{check.F17}}},
		// F7: h1.3's connection reset ended its session's advisory lock (from 85 s)
		{"lease-postgres-advisory-run4007-k2.jsonl", "k2", []string{check.F4, check.F5, check.F6, check.F7, check.F9}, [][]string{{check.F9}, {check.F17}}},
		// a fresh short run (faults run -store redis -faults F9b,F11,F2,F3
		// -seconds 60 -keys 4 -seed 31): F11 (the server's clock stepped
		// forward) at 7.3 s, F9b (restarted without its data) at 54 s
		{"lease-redis-seed31-k0.jsonl", "k0", []string{check.F9b, check.F11}, [][]string{{check.F9b}, {check.F11}}},
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			evs, err := history.ReadFile(filepath.Join("testdata", c.file))
			if err != nil {
				t.Fatal(err)
			}
			history.Sort(evs)
			if v := check.LeaseHistoryLoss(evs, hold, 0, check.LeaseLoss{TTL: time.Second, Faults: c.loss}); v.Result != "Ok" || v.Ops < 30 {
				t.Fatalf("with %v: %+v, want Ok over 30+ operations", c.loss, v)
			}
			for _, loss := range append([][]string{nil}, c.wrong...) {
				v := check.LeaseHistoryLoss(evs, hold, 0, check.LeaseLoss{TTL: time.Second, Faults: loss})
				if v.Result != "Illegal" || len(v.Illegal) != 1 || !strings.HasPrefix(v.Illegal[0], c.key+": ") {
					t.Fatalf("with %v: %+v, want Illegal on %s", loss, v, c.key)
				}
			}
		})
	}
}

// TestJudgeLease: an Illegal lease history is a missed target even where
// the concurrent-holders check found overlaps (before, those excused it);
// Run passes Params.LossFaults to the check.
func TestJudgeLease(t *testing.T) {
	got := func(tok uint64) []history.Event {
		return append(overlap(tok, episode(check.F9b, 50, 60)), history.Event{Src: "b", Kind: history.EvAcquired, Key: "k", Owner: "ob", Token: tok, T: 110 * ms})
	}
	cases := []struct {
		name   string
		evs    []history.Event
		loss   []string
		missed string // "": no missed target
	}{
		{"declared", got(6), []string{check.F9b}, ""},
		{"undeclared", got(6), nil, "lease history not linearizable (porcupine): k: "},
		{"another fault declared", got(6), []string{check.F11}, "lease history not linearizable (porcupine), even with the takeovers the store's design allows under F11: k: "},
		{"declared, token regression", got(4), []string{check.F9b}, "lease history not linearizable (porcupine), even with the takeovers the store's design allows under F9b: k: "},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := &check.RunResult{Metrics: check.Run(c.evs, check.Params{TTL: time.Second, LossFaults: c.loss}), TakeoverBound: 2}
			if r.Metrics.DoubleGrants != 1 {
				t.Fatalf("concurrent holders %d, want 1", r.Metrics.DoubleGrants)
			}
			check.Judge(r)
			var missed []string
			for _, s := range r.Missed {
				if strings.HasPrefix(s, "lease history") {
					missed = append(missed, s)
				}
			}
			if c.missed == "" && len(missed) > 0 || c.missed != "" && (len(missed) != 1 || !strings.HasPrefix(missed[0], c.missed)) {
				t.Fatalf("lease history missed %q, want %q", missed, c.missed)
			}
		})
	}
}
