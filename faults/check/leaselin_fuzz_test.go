package check_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/leasehold-go/leasehold/faults/check"
	"github.com/leasehold-go/leasehold/faults/history"
)

// leaseSim drives a correct store of one key (it grants only when the key
// is free or past its TTL, which starts at the store's own point, after
// the call) and three holders from a byte string, and records what the
// holders' wrappers would: calls with their call and return times, lost
// replies, refusals, kills. Every history it makes is linearizable.
type leaseSim struct {
	evs   []history.Event
	t     int64 // the store's last point, in ms
	next  uint64
	owner string // the store's holder ("" free)
	tok   uint64
	exp   int64 // the store's expiry, ms
	gen   [3]int
	held  [3]history.Event // what each holder believes it holds (Token 0: nothing)
	seq   int
	lastG int // index in evs of the last grant a holder learned (-1: none)
}

const simTTL = 1000 // ms: hold is 985

func (s *leaseSim) src(h int) string { return fmt.Sprintf("h%d.%d", h, s.gen[h]) }

// call records one store call whose point is the store's next instant,
// with a call and a return jittered around it by the next byte.
func (s *leaseSim) call(kind string, h int, owner string, tok uint64, j byte, err string) history.Event {
	s.t += 1 + int64(j%7)
	e := history.Event{Src: s.src(h), Kind: kind, Key: "k", Owner: owner, Token: tok,
		T0: (s.t - int64(j%41)) * ms, T: (s.t + int64(j/41)) * ms, Err: err}
	s.evs = append(s.evs, e)
	return e
}

func (s *leaseSim) step(op, j byte) {
	h := int(op % 3)
	lost := op&0x80 != 0 && op&0x40 != 0 // a quarter of the calls lose their reply
	p := s.t + 1 + int64(j%7)
	mine := s.held[h]
	switch {
	case (op>>2)%16 == 15: // kill and respawn
		s.evs = append(s.evs,
			history.Event{Src: "harness", Kind: history.EvFault, Fault: check.F3, Phase: "on", Target: s.src(h), T: p * ms},
			history.Event{Src: "harness", Kind: history.EvFault, Fault: check.F3, Phase: "off", Target: s.src(h), T: p*ms + 1})
		s.t = p
		s.gen[h]++
		s.held[h] = history.Event{}
	case (op>>2)%16 >= 12 && mine.Token == 0: // time passes
		s.t += int64(j) * 8
	case mine.Token == 0: // acquire with a fresh owner id
		s.seq++
		owner := fmt.Sprintf("o%d", s.seq)
		if s.owner != "" && s.exp > p {
			s.call(history.EvStoreAcquire, h, owner, 0, j, fmt.Sprintf(`leasehold: key "k" is held by x (token %d) for another 5ms`, s.tok))
			return
		}
		s.next += 2 // a token between two grants is free for foreignGrant
		s.owner, s.tok, s.exp = owner, s.next, p+simTTL
		if lost {
			s.call(history.EvStoreAcquire, h, owner, 0, j, "leasehold: store failure: reply dropped")
			return
		}
		s.held[h] = s.call(history.EvStoreAcquire, h, owner, s.next, j, "")
		s.lastG = len(s.evs) - 1
	case (op>>2)%2 == 0: // renew
		err := "leasehold: not held by this owner"
		if s.owner == mine.Owner && s.tok == mine.Token {
			err, s.exp = "", p+simTTL
		}
		if lost && err == "" {
			err = "leasehold: store failure: reply dropped"
		}
		s.call(history.EvStoreRenew, h, mine.Owner, mine.Token, j, err)
	default: // release
		if s.owner == mine.Owner && s.tok == mine.Token {
			s.owner = ""
		}
		err := ""
		if lost {
			err = "leasehold: store failure: reply dropped"
		}
		s.call(history.EvStoreRelease, h, mine.Owner, mine.Token, j, err)
		s.held[h] = history.Event{}
	}
}

func simulate(data []byte) *leaseSim {
	s := &leaseSim{t: 1000, lastG: -1}
	for i := 0; i+1 < len(data); i += 2 {
		s.step(data[i], data[i+1])
	}
	return s
}

// foreignGrant returns the history with a grant by a holder the store
// never had, returned at the instant a grant a holder learned returned,
// with the token between that grant's and the next (the store skips one
// each time): it overlaps that grant, which was neither released by then
// nor its holder killed. ok is false when no grant qualifies.
func (s *leaseSim) foreignGrant() ([]history.Event, bool) {
	for i := len(s.evs) - 1; i >= 0; i-- {
		g := s.evs[i]
		if g.Kind != history.EvStoreAcquire || g.Err != "" || g.Token == 0 || !s.overlappable(g) {
			continue
		}
		z := history.Event{Src: "z", Kind: history.EvStoreAcquire, Key: "k", Owner: "oz", Token: g.Token + 1, T0: g.T, T: g.T}
		return append(append([]history.Event(nil), s.evs...), z), true
	}
	return nil, false
}

// overlappable reports whether nothing could have freed g by its return:
// no release of it sent by then, no kill of its holder.
func (s *leaseSim) overlappable(g history.Event) bool {
	for _, e := range s.evs {
		if e.Kind == history.EvFault && e.Target == g.Src {
			return false // a killed holder's grant may be freed at once
		}
		if e.Kind == history.EvStoreRelease && e.Owner == g.Owner && e.T0 <= g.T {
			return false
		}
	}
	return true
}

// leaseVerdict checks evs with a generous time bound: the suite runs on a
// shared machine, and an Illegal proof over a long history took over 10 s
// at load 50 (a timeout is "Unknown", which fails the tests).
func leaseVerdict(evs []history.Event) check.LeaseVerdict {
	evs = append([]history.Event(nil), evs...)
	history.Sort(evs)
	return check.LeaseHistory(evs, hold, 60*time.Second)
}

// FuzzLeaseHistory: every history a correct store makes is Ok (or has no
// operations), whatever the lost replies, refusals, kills and overlapping
// call intervals; the same history with a foreign grant inside a live
// lease is Illegal and the refusal names the key.
func FuzzLeaseHistory(f *testing.F) {
	f.Add([]byte{0, 1, 1, 2, 4, 3, 8, 200, 2, 9, 0xc0, 5, 61, 255, 1, 3})
	f.Add([]byte("a lease history, three holders and a key"))
	f.Add([]byte{0, 0, 0x3c, 0, 1, 0, 0xc1, 10, 2, 40, 6, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 4096 {
			data = data[:4096]
		}
		s := simulate(data)
		if v := leaseVerdict(s.evs); v.Result != "Ok" && v.Result != "" {
			t.Fatalf("a correct store's history: %+v\n%s", v, dump(s.evs))
		}
		bad, ok := s.foreignGrant()
		if !ok {
			return
		}
		if v := leaseVerdict(bad); v.Result != "Illegal" || len(v.Illegal) != 1 || !strings.HasPrefix(v.Illegal[0], "k: ") {
			t.Fatalf("a foreign grant inside a live lease: %+v\n%s", v, dump(bad))
		}
	})
}

func dump(evs []history.Event) string {
	var b strings.Builder
	for _, e := range evs {
		fmt.Fprintf(&b, "%s %s %s tok %d [%d, %d] %s %s %s\n", e.Src, e.Kind, e.Owner, e.Token, e.T0/ms, e.T/ms, e.Err, e.Fault, e.Target)
	}
	return b.String()
}

// TestLeaseHistoryLongRun: a simulated history of some 2,000 store calls on
// one key, about what a 300 s run makes on a key, is checked whole (Ok) and with a
// foreign grant (Illegal).
func TestLeaseHistoryLongRun(t *testing.T) {
	data := make([]byte, 12000)
	x := uint32(7)
	for i := range data {
		x = x*1664525 + 1013904223
		data[i] = byte(x >> 24)
	}
	s := simulate(data)
	v := leaseVerdict(s.evs)
	if v.Result != "Ok" || v.Ops < 1500 {
		t.Fatalf("long history: %+v, want Ok over 1500+ operations", v)
	}
	bad, ok := s.foreignGrant()
	if !ok {
		t.Fatal("no grant to overlap")
	}
	if v := leaseVerdict(bad); v.Result != "Illegal" {
		t.Fatalf("long history with a foreign grant: %+v", v)
	}
}
