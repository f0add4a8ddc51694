package otel_test

import (
	"sync"
	"testing"
	"time"

	"github.com/leasehold-go/leasehold"
)

// fakeClock is a clock that moves only when told to (Advance), so that
// every duration the client reports is known exactly. Its timers fire when
// it reaches their time.
type fakeClock struct {
	mu     sync.Mutex
	now    time.Time
	timers map[*fakeTimer]struct{}
}

func newFakeClock() *fakeClock {
	return &fakeClock{now: time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC), timers: make(map[*fakeTimer]struct{})}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) NewTimer(d time.Duration) leasehold.Timer {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := &fakeTimer{c: c, at: c.now.Add(d), ch: make(chan time.Time, 1)}
	if d <= 0 {
		t.ch <- c.now
		return t
	}
	c.timers[t] = struct{}{}
	return t
}

// Advance moves the clock d forward and fires the timers now due.
func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	for t := range c.timers {
		if !c.now.Before(t.at) {
			delete(c.timers, t)
			t.ch <- c.now
		}
	}
}

type fakeTimer struct {
	c  *fakeClock
	at time.Time
	ch chan time.Time
}

func (t *fakeTimer) C() <-chan time.Time { return t.ch }

func (t *fakeTimer) Stop() bool {
	t.c.mu.Lock()
	defer t.c.mu.Unlock()
	_, pending := t.c.timers[t]
	delete(t.c.timers, t)
	return pending
}

// advanceFiring waits until a timer is set that moving the clock by d
// fires, then moves it. The client's scheduler reads the clock before it
// sets its timer for the next event: moving the clock in between would set
// that timer late by d, which a real clock never jumps to cause.
func (c *fakeClock) advanceFiring(t *testing.T, d time.Duration) {
	t.Helper()
	for give := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		c.mu.Lock()
		armed := false
		for tm := range c.timers {
			armed = armed || !c.now.Add(d).Before(tm.at)
		}
		c.mu.Unlock()
		if armed {
			c.Advance(d)
			return
		}
		if time.Now().After(give) {
			t.Fatalf("no timer due within %s of the fake clock in 10 s", d)
		}
	}
}
