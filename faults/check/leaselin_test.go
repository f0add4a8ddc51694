package check_test

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/leasehold-go/leasehold/faults/check"
	"github.com/leasehold-go/leasehold/faults/history"
)

// hold is the expiry bound after a call with a 1 s TTL and the default rho
// and margin: 1 s x 0.99 - 5 ms.
const hold = 985 * time.Millisecond

func storeEv(kind, src, key, owner string, tok uint64, t0, t int64, err string) history.Event {
	return history.Event{Src: src, Kind: kind, Key: key, Owner: owner, Token: tok, T0: t0 * ms, T: t * ms, Err: err}
}

func acq(src, owner string, tok uint64, t0, t int64) history.Event {
	return storeEv(history.EvStoreAcquire, src, "k", owner, tok, t0, t, "")
}

func renew(src, owner string, tok uint64, t0, t int64) history.Event {
	return storeEv(history.EvStoreRenew, src, "k", owner, tok, t0, t, "")
}

func rel(src, owner string, tok uint64, t0, t int64) history.Event {
	return storeEv(history.EvStoreRelease, src, "k", owner, tok, t0, t, "")
}

func failed(e history.Event, err string) history.Event {
	e.Err = err
	if e.Kind == history.EvStoreAcquire {
		e.Token = 0
	}
	return e
}

func kill(src string, t int64) []history.Event {
	return []history.Event{
		{Src: "harness", Kind: history.EvFault, Fault: check.F3, Phase: "on", Target: src, T: t * ms},
		{Src: "harness", Kind: history.EvFault, Fault: check.F3, Phase: "off", Target: src, T: t*ms + 1},
	}
}

// endKill is the harness's kill of holders at the run's end.
func endKill(target string, t int64) history.Event {
	return history.Event{Src: "harness", Kind: history.EvEndKill, Target: target, T: t * ms}
}

func op(src string, t0, t int64) history.Event {
	return history.Event{Src: src, Kind: history.EvOp, Key: "k", Owner: "oa", Token: 1, T0: t0 * ms, T: t * ms}
}

const lostReply = "leasehold: store failure: read tcp: connection reset by peer"

func TestLeaseHistoryModel(t *testing.T) {
	cases := []struct {
		name string
		evs  []history.Event
		want string
	}{
		{"overlap with no write in it", []history.Event{acq("a", "oa", 1, 0, 10), acq("b", "ob", 2, 100, 110)}, "Illegal"},
		{"clean handover by release", []history.Event{acq("a", "oa", 1, 0, 10), rel("a", "oa", 1, 50, 60), acq("b", "ob", 2, 55, 70)}, "Ok"},
		{"acquire returned before the release was sent", []history.Event{acq("a", "oa", 1, 0, 10), acq("b", "ob", 2, 20, 30), rel("a", "oa", 1, 50, 60)}, "Illegal"},
		{"handover by expiry", []history.Event{acq("a", "oa", 1, 0, 10), acq("b", "ob", 2, 980, 990)}, "Ok"},
		{"granted before the expiry bound", []history.Event{acq("a", "oa", 1, 0, 10), acq("b", "ob", 2, 900, 980)}, "Illegal"},
		{"a long acquire may linearize after the expiry", []history.Event{acq("a", "oa", 1, 0, 1000), acq("b", "ob", 2, 500, 2000)}, "Ok"},
		{"renewal moves the bound", []history.Event{acq("a", "oa", 1, 0, 10), renew("a", "oa", 1, 500, 510), acq("b", "ob", 2, 1000, 1010)}, "Illegal"},
		{"after the renewed bound", []history.Event{acq("a", "oa", 1, 0, 10), renew("a", "oa", 1, 500, 510), acq("b", "ob", 2, 1480, 1490)}, "Ok"},
		{"retry given its own grant back", []history.Event{acq("a", "oa", 1, 0, 10), acq("a", "oa", 1, 20, 30)}, "Ok"},
		{"retry of the same owner given a new token", []history.Event{acq("a", "oa", 1, 0, 10), acq("a", "oa", 2, 20, 30), renew("a", "oa", 2, 40, 50)}, "Ok"},
		{"the old token renewed after the new one", []history.Event{acq("a", "oa", 1, 0, 10), acq("a", "oa", 2, 20, 30), renew("a", "oa", 1, 40, 50)}, "Illegal"},
		{"retry of the same owner given an older token", []history.Event{acq("a", "oa", 2, 0, 10), acq("a", "oa", 1, 20, 30)}, "Illegal"},
		{"token below one granted before", []history.Event{acq("a", "oa", 5, 0, 10), rel("a", "oa", 5, 20, 30), acq("b", "ob", 3, 40, 50)}, "Illegal"},
		{"lost acquire reply that did not happen", []history.Event{failed(acq("a", "oa", 0, 0, 10), lostReply), acq("b", "ob", 1, 20, 30)}, "Ok"},
		{"lost acquire reply that happened (its grant renewed)", []history.Event{failed(acq("a", "oa", 0, 0, 10), lostReply), renew("a", "oa", 1, 20, 30)}, "Ok"},
		{"lost acquire that happened, then an overlap", []history.Event{failed(acq("a", "oa", 0, 0, 10), lostReply), renew("a", "oa", 1, 20, 30), acq("b", "ob", 2, 100, 110)}, "Illegal"},
		{"refused acquire proves nothing", []history.Event{failed(acq("b", "ob", 0, 0, 10), `leasehold: key "k" is held by a (token 1) for another 900ms`)}, ""},
		{"release after expiry and a new grant", []history.Event{acq("a", "oa", 1, 0, 10), acq("b", "ob", 2, 1000, 1010), rel("a", "oa", 1, 1100, 1110)}, "Ok"},
		{"renewal of a replaced grant", []history.Event{acq("a", "oa", 1, 0, 10), acq("b", "ob", 2, 1000, 1010), renew("a", "oa", 1, 1100, 1110)}, "Illegal"},
		{"renewal after a release", []history.Event{acq("a", "oa", 1, 0, 10), rel("a", "oa", 1, 20, 30), renew("a", "oa", 1, 40, 50)}, "Illegal"},
		{"a holder killed at the run's end may have released", []history.Event{acq("a", "oa", 1, 0, 10), renew("a", "oa", 1, 500, 510), endKill("a", 520), acq("b", "ob", 2, 600, 610)}, "Ok"},
		{"a grant before the killed holder's last call still overlaps", []history.Event{acq("a", "oa", 1, 0, 10), acq("b", "ob", 2, 300, 310), renew("a", "oa", 1, 500, 510), endKill("a", 620)}, "Illegal"},
		{"with the end's kill recorded, the probe's first call excuses no one else", []history.Event{acq("a", "oa", 1, 0, 10), renew("a", "oa", 1, 500, 510), endKill("c", 520), acq("harness", "oh", 2, 600, 610)}, "Illegal"},
		{"the end's kill of another holder frees nothing", []history.Event{acq("a", "oa", 1, 0, 10), renew("a", "oa", 1, 500, 510), endKill("c", 520), acq("b", "ob", 2, 600, 610)}, "Illegal"},
		{"release whose reply was lost may have freed", []history.Event{acq("a", "oa", 1, 0, 10), failed(rel("a", "oa", 1, 50, 60), lostReply), acq("b", "ob", 2, 100, 110)}, "Ok"},
		{"killed holder may have been freed", append([]history.Event{acq("a", "oa", 1, 0, 10), acq("b", "ob", 2, 100, 110)}, kill("a", 50)...), "Ok"},
		// a's operation at 150 says nothing of a's was in flight before it
		{"kill after the overlap does not excuse it", append([]history.Event{acq("a", "oa", 1, 0, 10), acq("b", "ob", 2, 100, 110), op("a", 140, 150)}, kill("a", 200)...), "Illegal"},
		{"kill of another holder does not excuse it", append([]history.Event{acq("a", "oa", 1, 0, 10), acq("b", "ob", 2, 100, 110)}, kill("c", 50)...), "Illegal"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			evs := append([]history.Event(nil), c.evs...)
			history.Sort(evs)
			v := check.LeaseHistory(evs, hold, 5*time.Second)
			if v.Result != c.want {
				t.Fatalf("verdict %q, want %q (illegal %v, timed out %v)", v.Result, c.want, v.Illegal, v.TimedOut)
			}
			if c.want == "Illegal" && (len(v.Illegal) != 1 || !strings.HasPrefix(v.Illegal[0], "k: ")) {
				t.Fatalf("the illegal key is not named: %v", v.Illegal)
			}
		})
	}
}

func readLeaseHistory(t *testing.T) []history.Event {
	t.Helper()
	evs, err := history.ReadFile(filepath.Join("testdata", "lease-sqlite-seed7.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	history.Sort(evs)
	return evs
}

// TestLeaseHistoryRecordedRun checks the lease events of a recorded run
// (faults run -store sqlite -seed 7, every fault class of the store once;
// the store events and the faults kept, the refusals left out): Ok. Then
// one grant is moved into the lease before it on its key: Illegal.
func TestLeaseHistoryRecordedRun(t *testing.T) {
	evs := readLeaseHistory(t)
	v := check.LeaseHistory(evs, hold, 0)
	if v.Result != "Ok" || v.Keys != 2 || v.Ops < 200 {
		t.Fatalf("recorded run: %+v, want Ok over 2 keys and 200+ operations", v)
	}
	var first *history.Event
	moved := false
	for i := range evs {
		e := &evs[i]
		if e.Kind != history.EvStoreAcquire || e.Err != "" || e.Key != "k1" {
			continue
		}
		if first == nil {
			first = e
			continue
		}
		if e.Owner != first.Owner {
			// its acquire now returns 20 ms after the first grant's, well within it
			e.T0, e.T = first.T+10*int64(time.Millisecond), first.T+20*int64(time.Millisecond)
			moved = true
			break
		}
	}
	if !moved {
		t.Fatal("no second grant of k1 to move")
	}
	history.Sort(evs)
	v = check.LeaseHistory(evs, hold, 0)
	if v.Result != "Illegal" || len(v.Illegal) != 1 || !strings.HasPrefix(v.Illegal[0], "k1: ") {
		t.Fatalf("mutated run: %+v, want Illegal on k1", v)
	}
}

func TestLeaseHistoryInRun(t *testing.T) {
	m := check.Run([]history.Event{acq("a", "oa", 1, 0, 10), acq("b", "ob", 2, 100, 110)}, check.Params{TTL: time.Second})
	if m.Lease.Result != "Illegal" || m.Lease.Ops != 2 {
		t.Fatalf("lease verdict %+v, want Illegal over 2 operations", m.Lease)
	}
	found := false
	for _, v := range m.Violations {
		found = found || strings.Contains(v, "lease history of k")
	}
	if !found {
		t.Fatalf("no violation names the lease history: %v", m.Violations)
	}
}
