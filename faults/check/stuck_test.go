package check_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/leasehold-go/leasehold/faults/check"
	"github.com/leasehold-go/leasehold/faults/history"
)

// TestFinalProbeUnreachableNotStuck: a final probe that found the store
// not answering is reported as such, a missed target, and not as a stuck
// key; a key the store kept held stays stuck.
func TestFinalProbeUnreachableNotStuck(t *testing.T) {
	down := fmt.Errorf("%w (no answer for 1m0s in all): zk: could not connect to a server", check.ErrProbeUnreachable)
	for _, tc := range []struct {
		name       string
		final      map[string]error
		stuck      []string
		down       []string
		missPrefix string
	}{
		{"granted", map[string]error{"k": nil}, nil, nil, ""},
		{"held", map[string]error{"k": errors.New("not acquired within 4.25s after every holder died: held")},
			[]string{"k (final acquire: not acquired"}, nil, "stuck keys: k (final acquire"},
		{"unreachable", map[string]error{"k": down}, nil,
			[]string{"k (store unreachable during the final probe (no answer"}, "store unreachable during the final probe: k ("},
	} {
		evs := []history.Event{fw(history.EvAdmit, "k", "o1", 1, 1500)}
		m := check.Run(evs, check.Params{TTL: time.Second, QuietFrom: 1000 * ms, End: 2000 * ms, Final: tc.final})
		if !prefixes(m.Stuck, tc.stuck) || !prefixes(m.Unreachable, tc.down) {
			t.Errorf("%s: stuck %q, unreachable %q; want %q, %q", tc.name, m.Stuck, m.Unreachable, tc.stuck, tc.down)
		}
		r := &check.RunResult{SafeTokens: true, TakeoverBound: 2, Metrics: m}
		check.Judge(r)
		missed := strings.Join(r.Missed, "\n")
		if tc.missPrefix == "" && strings.Contains(missed, "final") || tc.missPrefix != "" && !strings.Contains(missed, tc.missPrefix) {
			t.Errorf("%s: missed %q, want %q", tc.name, r.Missed, tc.missPrefix)
		}
	}
}

// prefixes reports whether got[i] starts with want[i], one for one.
func prefixes(got, want []string) bool {
	if len(got) != len(want) {
		return false
	}
	for i := range got {
		if !strings.HasPrefix(got[i], want[i]) {
			return false
		}
	}
	return true
}
