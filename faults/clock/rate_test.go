package clock_test

import (
	"testing"
	"time"

	"github.com/leasehold-go/leasehold/faults/clock"
)

// TestRate checks the slow clock against real time measured around
// its readings: bounds that hold however the machine schedules the test.
func TestRate(t *testing.T) {
	c := clock.NewRate(0.5)
	r0 := time.Now()
	c0 := c.Now()
	r1 := time.Now()
	time.Sleep(20 * time.Millisecond)
	r2 := time.Now()
	c1 := c.Now()
	r3 := time.Now()
	got := c1.Sub(c0)
	if lo, hi := r2.Sub(r1)/2, r3.Sub(r0)/2; got < lo || got > hi {
		t.Fatalf("a 0.5-rate clock advanced %s while real time advanced between %s and %s", got, 2*lo, 2*hi)
	}
	start := time.Now()
	tm := c.NewTimer(10 * time.Millisecond)
	<-tm.C()
	if el := time.Since(start); el < 20*time.Millisecond {
		t.Fatalf("a 10 ms timer on a 0.5-rate clock fired after %s of real time, want >= 20ms", el)
	}
}
