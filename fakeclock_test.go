package leasehold_test

import (
	"sync"
	"time"

	"github.com/leasehold-go/leasehold"
)

// fakeClock is a leasehold.Clock that moves only when Advance is called,
// shared by a client and a memory store so that both read the same time.
type fakeClock struct {
	mu     sync.Mutex
	now    time.Time
	steps  []time.Duration // the latest advances, newest last
	timers map[*fakeTimer]struct{}
}

func newFakeClock() *fakeClock {
	return &fakeClock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), timers: map[*fakeTimer]struct{}{}}
}

// Now implements leasehold.Clock.
func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// NewTimer implements leasehold.Clock. A timer due now fires at once.
func (c *fakeClock) NewTimer(d time.Duration) leasehold.Timer {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := &fakeTimer{c: c, ch: make(chan time.Time, 1), when: c.now.Add(d)}
	if d <= 0 {
		t.ch <- c.now
		return t
	}
	c.timers[t] = struct{}{}
	return t
}

// Advance moves the clock by d and fires the timers that are due.
func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	c.steps = append(c.steps, d)
	if len(c.steps) > 4 {
		c.steps = c.steps[1:]
	}
	c.fire(0)
}

// Kick fires the timers that would be due had they been made before the
// latest k advances. A caller that reads Now, and then makes a timer for
// a time it computed from that reading, races with Advance: the timer is
// late by the advance between the two calls, which a real clock would
// have run through but a fake one never will.
func (c *fakeClock) Kick(k int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var back time.Duration
	for i := len(c.steps) - 1; i >= 0 && i >= len(c.steps)-k; i-- {
		back += c.steps[i]
	}
	c.fire(back)
}

// fire fires the timers due by now+slack. c.mu must be held.
func (c *fakeClock) fire(slack time.Duration) {
	for t := range c.timers {
		if !t.when.After(c.now.Add(slack)) {
			t.ch <- c.now
			delete(c.timers, t)
		}
	}
}

type fakeTimer struct {
	c    *fakeClock
	ch   chan time.Time
	when time.Time
}

func (t *fakeTimer) C() <-chan time.Time { return t.ch }

func (t *fakeTimer) Stop() bool {
	t.c.mu.Lock()
	defer t.c.mu.Unlock()
	_, ok := t.c.timers[t]
	delete(t.c.timers, t)
	return ok
}
