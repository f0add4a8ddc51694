package consul

import (
	"math"
	"net/http"
	"testing"
	"time"
)

func TestNextToken(t *testing.T) {
	const max64 = math.MaxUint64
	for _, c := range []struct {
		name          string
		prev, hw, now uint64
		want          uint64
		ok            bool
	}{
		{"new key: the clock", 0, 0, 1_700_000_000_000_000, 1_700_000_000_000_000, true},
		{"entry ahead of the clock", 1_700_000_000_000_005, 0, 1_700_000_000_000_000, 1_700_000_000_000_006, true},
		{"store's mark ahead of the entry (data lost)", 16, 1_700_000_000_000_010, 1_700_000_000_000_000, 1_700_000_000_000_011, true},
		{"old Raft-index token below the clock", 105, 0, 1_700_000_000_000_000, 1_700_000_000_000_000, true},
		{"no clock", 7, 3, 0, 8, true},
		{"entry one below the limit", max64 - 1, 0, 5, max64, true},
		{"entry at the limit", max64, 0, 5, 0, false},
		{"mark at the limit", 3, max64, 5, 0, false},
	} {
		got, ok := nextToken(c.prev, c.hw, c.now)
		if got != c.want || ok != c.ok {
			t.Errorf("%s: nextToken(%d, %d, %d) = %d, %v; want %d, %v", c.name, c.prev, c.hw, c.now, got, ok, c.want, c.ok)
		}
	}
}

// TestServerClock: the estimate follows the latest Date, never goes back
// when an older or earlier Date arrives, and is the local clock before any.
func TestServerClock(t *testing.T) {
	var c serverClock
	if us, seen := c.micros(); seen || us == 0 {
		t.Fatalf("before any Date: %d, %v; want the local clock", us, seen)
	}
	hdr := func(t time.Time) http.Header { return http.Header{"Date": {t.UTC().Format(http.TimeFormat)}} }
	future := time.Now().Add(48 * time.Hour).Truncate(time.Second)
	c.observe(hdr(future), time.Now())
	us, seen := c.micros()
	if !seen || us < unixMicros(future) || us > unixMicros(future.Add(time.Minute)) {
		t.Fatalf("after a Date of %s: %d, %v", future, us, seen)
	}
	c.observe(hdr(future.Add(-24*time.Hour)), time.Now()) // the agent's clock stepped back
	if back, _ := c.micros(); back < us {
		t.Fatalf("estimate went back from %d to %d", us, back)
	}
	c.observe(http.Header{"Date": {"not a date"}}, time.Now())
	if again, _ := c.micros(); again < us {
		t.Fatalf("a bad Date moved the estimate back to %d", again)
	}
}

// TestHighWaterSlack: a token far ahead of the clock (a planted value) does
// not raise the store's mark; one near it does.
func TestHighWaterSlack(t *testing.T) {
	var c serverClock
	var h highWater
	now, _ := c.micros()
	h.see(math.MaxUint64-1, &c)
	if h.v.Load() != 0 {
		t.Fatalf("a huge token raised the mark to %d", h.v.Load())
	}
	h.see(now+5, &c)
	h.see(now+2, &c)
	if h.v.Load() != now+5 {
		t.Fatalf("mark %d, want %d", h.v.Load(), now+5)
	}
}
