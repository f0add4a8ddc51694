package leasehold

import (
	"container/heap"
	"time"
)

// A Client drives every lease it holds from one scheduler: a min-heap of
// timed events (a lease's deadline, a lease's next renewal or retry, a
// batch group's next batch) and one goroutine that sleeps on one Clock
// timer until the earliest of them. The goroutine runs only while the heap
// is not empty, so a client that holds no lease has none. It never calls
// the store: a due renewal starts a short-lived goroutine for the store
// call, whose result is applied under c.mu by that goroutine, so a slow
// renewal (or a blocked OnJeopardy callback, which runs on its own
// goroutine) never delays another lease's deadline. An idle lease costs
// its two heap entries and no goroutine.

// evKind is what a scheduled event does when it is due.
type evKind uint8

const (
	evDeadline evKind = iota // the lease's holder-side deadline: it is lost
	evRenew                  // the lease's own renewal (or retry) is due
	evBatch                  // a batch group's next RenewMany is due
)

// event is one entry of the scheduler's heap. Leases and batch groups embed
// theirs, so scheduling allocates nothing. Guarded by c.mu.
type event struct {
	when time.Time
	pos  int // 1 + the index in the heap; 0 when not scheduled
	kind evKind
	l    *Lease      // evDeadline, evRenew
	g    *batchGroup // evBatch
}

// eventHeap orders events by time, deadlines first among equal times.
type eventHeap []*event

func (h eventHeap) Len() int { return len(h) }

func (h eventHeap) Less(i, j int) bool {
	a, b := h[i], h[j]
	if a.when.Equal(b.when) {
		return a.kind < b.kind
	}
	return a.when.Before(b.when)
}

func (h eventHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].pos = i + 1
	h[j].pos = j + 1
}

func (h *eventHeap) Push(x any) {
	e := x.(*event)
	*h = append(*h, e)
	e.pos = len(*h)
}

func (h *eventHeap) Pop() any {
	old := *h
	n := len(old)
	e := old[n-1]
	old[n-1] = nil
	e.pos = 0
	*h = old[:n-1]
	return e
}

// dueChunk bounds the events handled per hold of c.mu, so that renewal
// results are applied between chunks when very many events fall due at
// once.
const dueChunk = 512

// at (re)schedules e at when, starting the scheduler's goroutine if it is
// not running. c.mu must be held.
func (c *Client) at(e *event, when time.Time) {
	e.when = when
	if e.pos > 0 {
		heap.Fix(&c.events, e.pos-1)
	} else {
		heap.Push(&c.events, e)
	}
	if !c.looping {
		c.looping = true
		c.loopDone = make(chan struct{})
		go c.loop(c.loopDone)
		return
	}
	if e.pos == 1 && when.Before(c.armed) {
		c.poke() // earlier than the timer the loop sleeps on
	}
}

// in schedules e d from now. c.mu must be held.
func (c *Client) in(e *event, d time.Duration) {
	c.at(e, c.opts.Clock.Now().Add(d))
}

// unschedule removes e from the heap if it is there. c.mu must be held.
func (c *Client) unschedule(e *event) {
	if e.pos == 0 {
		return
	}
	heap.Remove(&c.events, e.pos-1)
	if len(c.events) == 0 {
		c.poke() // nothing left: the loop exits
	}
}

// poke wakes the loop to look at the heap again.
func (c *Client) poke() {
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// loop is the scheduler's goroutine. It returns when the heap is empty.
func (c *Client) loop(done chan struct{}) {
	defer close(done)
	var fired time.Time
	for {
		next, ok := c.runDue(fired)
		if !ok {
			return
		}
		t := c.opts.Clock.NewTimer(next.Sub(c.opts.Clock.Now()))
		select {
		case <-t.C():
			fired = next
		case <-c.wake:
			t.Stop()
			fired = time.Time{}
		}
	}
}

// runDue handles every event due now, or due at fired (the time the timer
// that just fired was set for: a clock may read a little earlier than its
// timers, and the event the timer was set for is due then, as a timer per
// event would have made it). It returns the time of the next event, or
// false when the heap is empty and the loop must exit.
func (c *Client) runDue(fired time.Time) (time.Time, bool) {
	for {
		c.mu.Lock()
		c.armed = time.Time{} // the loop is awake: no need to poke it
		cut := c.opts.Clock.Now()
		if fired.After(cut) {
			cut = fired
		}
		n := 0
		for ; n < dueChunk && len(c.events) > 0 && !c.events[0].when.After(cut); n++ {
			c.fire(heap.Pop(&c.events).(*event))
		}
		if len(c.events) == 0 {
			c.looping = false
			c.armed = time.Time{}
			c.mu.Unlock()
			return time.Time{}, false
		}
		if n < dueChunk {
			c.armed = c.events[0].when
			c.mu.Unlock()
			return c.armed, true
		}
		c.mu.Unlock()
	}
}

// fire handles a due event, which has left the heap. c.mu must be held.
func (c *Client) fire(e *event) {
	switch e.kind {
	case evDeadline:
		c.end(e.l, ErrExpired)
	case evRenew:
		c.renewAlone(e.l)
	case evBatch:
		c.renewBatch(e.g)
	}
}
