package check_test

import (
	"testing"

	"github.com/leasehold-go/leasehold/faults/check"
	"github.com/leasehold-go/leasehold/faults/history"
)

// The fenced-register events of key k2 at the end of sqlite run 4001 of
// the long fault run (issue 31): h2.12 wrote with token 247 (answered);
// h1.12's write with token 248 was admitted at 27337.467 s, after them,
// but h1.12 was killed at the end of the run before it saw the answer.
// The quiet window had ended before that (end = 27337.0 s).
const (
	own247  = "8c503cfe4f83453638db4c408d89aa09"
	own248  = "acea88f41d71991588c69ed8b5024712"
	end4001 = int64(27337000000000)
)

func regWrite(src, owner string, tok uint64, t0, t int64, req string) history.Event {
	return history.Event{Src: src, Kind: history.EvFWrite, Key: "k2", Owner: owner, Token: tok, T0: t0, T: t, Req: req, Status: 204}
}

func regDecision(kind, owner string, tok uint64, t int64, req string) history.Event {
	return history.Event{Src: "harness", Kind: kind, Key: "k2", Owner: owner, Token: tok, T: t, Req: req}
}

func run4001() []history.Event {
	return []history.Event{
		regDecision(history.EvAdmit, own247, 247, 27336921716604, "h2.12-279"),
		regWrite("h2.12", own247, 247, 27336901498895, 27336923088902, "h2.12-279"),
		regDecision(history.EvAdmit, own247, 247, 27337056363606, "h2.12-281"),
		regWrite("h2.12", own247, 247, 27337050814304, 27337057666091, "h2.12-281"),
		regDecision(history.EvAdmit, own247, 247, 27337253539543, "h2.12-285"),
		regWrite("h2.12", own247, 247, 27337207145809, 27337253654319, "h2.12-285"),
		regDecision(history.EvAdmit, own248, 248, 27337467581907, "h1.12-232"),
	}
}

// after248 is an answered write with token 248, then an unanswered one
// with token 247 that the resource decided (kind) after it.
func after248(kind string) func() []history.Event {
	return func() []history.Event {
		return []history.Event{
			regDecision(history.EvAdmit, own248, 248, 27337000000000, "h1.12-1"),
			regWrite("h1.12", own248, 248, 27336990000000, 27337010000000, "h1.12-1"),
			regDecision(kind, own247, 247, 27337100000000, "h2.12-1"),
		}
	}
}

// TestLinearizableUnansweredDecision: a write the resource decided but
// whose holder never saw the answer ends at the resource's record, not at
// the run's end, which may come before it: the real history of run 4001
// is Ok, and moving the unanswered decisions so that the fence admitted a
// stale write is still Illegal.
func TestLinearizableUnansweredDecision(t *testing.T) {
	cases := []struct {
		name string
		evs  func() []history.Event
		end  int64
		want string
	}{
		{"run 4001 as recorded, decided after the quiet window's end", run4001, end4001, "Ok"},
		{"run 4001 as recorded, no end", run4001, 0, "Ok"},
		{"token 248 admitted before the answered 247s were sent: stale admitted", func() []history.Event {
			evs := run4001()
			evs[6].T = 27336800000000
			return evs
		}, end4001, "Illegal"},
		{"an unanswered 247 admitted after the answered 248: stale admitted", after248(history.EvAdmit), end4001, "Illegal"},
		{"an unanswered 247 refused after the answered 248", after248(history.EvFenced), end4001, "Ok"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := check.Linearizable(c.evs(), c.end); got != c.want {
				t.Fatalf("Linearizable = %s, want %s", got, c.want)
			}
		})
	}
}
