package check_test

import (
	"strings"
	"testing"

	"github.com/leasehold-go/leasehold/faults/check"
)

func land(key string, tok uint64, t int64) check.Landing {
	return check.Landing{Key: key, Token: tok, T: t * ms, Req: key + "-" + string(rune('a'+tok))}
}

func TestStaleLandingsInOrderPass(t *testing.T) {
	n, vs := check.StaleLandings([]check.Landing{
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
	n, vs := check.StaleLandings([]check.Landing{
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
