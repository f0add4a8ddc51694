package objtoken

import (
	"fmt"
	"math"
	"testing"
	"time"
)

func TestNext(t *testing.T) {
	now := time.Unix(1795733400, 0)
	us := uint64(now.UnixMicro())
	for _, c := range []struct {
		last, ceiling uint64
		now           time.Time
		want          uint64
		ok            bool
	}{
		{5, 1000, time.Time{}, 6, true},
		{999, 1000, time.Time{}, 1000, true},
		{1000, 1000, time.Time{}, 0, false},
		{5, 0, time.Time{}, 0, false}, // no ceiling: raise the counter
		{us + 5, us + Step, now, us + 6, true},
		{5, us + Step, now, us, true},        // the server's time is the floor
		{5, us - 1, now, 0, false},           // past the ceiling by the clock
		{5, 1000, time.Unix(-5, 0), 6, true}, // a time before 1970 is no floor
		{math.MaxUint64 - 1, math.MaxUint64, now, math.MaxUint64, true},
		{math.MaxUint64, math.MaxUint64, now, 0, false},
	} {
		if got, ok := Next(c.last, c.ceiling, c.now); got != c.want || ok != c.ok {
			t.Errorf("Next(%d, %d, %v) = %d, %v; want %d, %v", c.last, c.ceiling, c.now, got, ok, c.want, c.ok)
		}
	}
}

func TestCeiling(t *testing.T) {
	for _, c := range []struct{ tok, want uint64 }{
		{1, 1 + Step},
		{math.MaxUint64 - Step, math.MaxUint64},
		{math.MaxUint64 - Step + 1, math.MaxUint64},
		{math.MaxUint64, math.MaxUint64},
	} {
		if got := Ceiling(c.tok); got != c.want {
			t.Errorf("Ceiling(%d) = %d, want %d", c.tok, got, c.want)
		}
	}
}

// TestReleased: a value is taken once; the set stays bounded, and the
// name put last is kept.
func TestReleased(t *testing.T) {
	var r Released[int]
	if _, ok := r.Take("a"); ok {
		t.Fatal("took from an empty set")
	}
	r.Put("a", 1)
	if v, ok := r.Take("a"); !ok || v != 1 {
		t.Fatalf("Take = %d, %v; want 1, true", v, ok)
	}
	if _, ok := r.Take("a"); ok {
		t.Fatal("took a value twice")
	}
	for i := range 3 * MaxReleased {
		r.Put(fmt.Sprint(i), i)
		if r.m.Len() > MaxReleased {
			t.Fatalf("%d remembered, more than %d", r.m.Len(), MaxReleased)
		}
	}
	if v, ok := r.Take(fmt.Sprint(3*MaxReleased - 1)); !ok || v != 3*MaxReleased-1 {
		t.Fatalf("the last put was forgotten: %d, %v", v, ok)
	}
}

// FuzzNext: a token Next grants is above last, at least the time in µs
// and under the ceiling; a refusal is at the largest token or past the
// ceiling; Ceiling reserves at least the token it is given.
func FuzzNext(f *testing.F) {
	f.Add(uint64(5), uint64(1000), int64(0))
	f.Add(uint64(math.MaxUint64), uint64(math.MaxUint64), int64(1795733400))
	f.Add(uint64(0), uint64(0), int64(-1))
	f.Fuzz(func(t *testing.T, last, ceiling uint64, sec int64) {
		now := time.Unix(sec%(1<<40), 0)
		us := uint64(max(now.UnixMicro(), 0))
		want := max(last+1, us)
		tok, ok := Next(last, ceiling, now)
		if ok != (last < math.MaxUint64 && want <= ceiling) || ok && (tok != want || tok > ceiling || tok <= last) {
			t.Fatalf("Next(%d, %d, %v) = %d, %v", last, ceiling, now, tok, ok)
		}
		if c := Ceiling(last); c < last || c != math.MaxUint64 && c != last+Step {
			t.Fatalf("Ceiling(%d) = %d", last, c)
		}
	})
}
