package leasehold

import "time"

// A Client drives every lease it holds from one scheduler: a min-heap of
// timed events (a lease's deadline, a lease's next renewal or retry, a
// batch group's next batch) and one goroutine that sleeps on one Clock
// timer until the earliest of them. The goroutine runs only while the heap
// is not empty (and a little after: see below). It never calls
// the store: a due renewal starts a short-lived goroutine for the store
// call, whose result is applied under c.mu by that goroutine, so a slow
// renewal (or a blocked OnJeopardy callback, which runs on its own
// goroutine) never delays another lease's deadline. An idle lease costs
// its two heap entries and no goroutine. Once the heap empties the
// goroutine lingers for loopLinger, so that a client acquiring and
// releasing in a loop does not start one per lease; Close ends it at once.

// evKind is what a scheduled event does when it is due.
type evKind uint8

const (
	evDeadline evKind = iota // the lease's holder-side deadline: it is lost
	evRenew                  // the lease's own renewal (or retry) is due
	evBatch                  // a batch group's next RenewMany is due
	evFree                   // a released lease's MinHold has passed: free it
)

// event is one entry of the scheduler's heap. Leases and batch groups embed
// theirs, so scheduling allocates nothing. Guarded by c.mu.
type event struct {
	when time.Time
	pos  int // 1 + the index in the heap; 0 when not scheduled
	kind evKind
	l    *Lease      // evDeadline, evRenew, evFree
	g    *batchGroup // evBatch
}

// eventHeap is a min-heap of events by time, deadlines first among equal
// times. Each entry carries its event's time as an offset from the client's
// epoch, so that ordering reads the heap's own array and not the events
// spread over the leases.
type eventHeap []heapEntry

type heapEntry struct {
	at   int64 // nanoseconds from c.epoch
	kind evKind
	e    *event
}

func (h eventHeap) less(i, j int) bool {
	if h[i].at != h[j].at {
		return h[i].at < h[j].at
	}
	return h[i].kind < h[j].kind
}

func (h eventHeap) swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].e.pos = i + 1
	h[j].e.pos = j + 1
}

func (h eventHeap) up(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if !h.less(i, p) {
			return
		}
		h.swap(i, p)
		i = p
	}
}

// down sifts entry i down, reporting whether it moved.
func (h eventHeap) down(i int) bool {
	i0, n := i, len(h)
	for {
		l := 2*i + 1
		if l >= n {
			break
		}
		m := l
		if r := l + 1; r < n && h.less(r, l) {
			m = r
		}
		if !h.less(m, i) {
			break
		}
		h.swap(i, m)
		i = m
	}
	return i > i0
}

// set puts e in the heap at at, or moves it there.
func (h *eventHeap) set(e *event, at int64) {
	if e.pos == 0 {
		*h = append(*h, heapEntry{at: at, kind: e.kind, e: e})
		e.pos = len(*h)
		h.up(len(*h) - 1)
		return
	}
	i := e.pos - 1
	(*h)[i].at = at
	if !h.down(i) {
		h.up(i)
	}
}

// remove takes e out of the heap.
func (h *eventHeap) remove(e *event) {
	i, n := e.pos-1, len(*h)-1
	if i != n {
		h.swap(i, n)
	}
	(*h)[n] = heapEntry{}
	*h = (*h)[:n]
	e.pos = 0
	if i != n {
		if !h.down(i) {
			h.up(i)
		}
	}
}

// pop takes the earliest event out of the heap.
func (h *eventHeap) pop() *event {
	e := (*h)[0].e
	h.remove(e)
	return e
}

// loopLinger is how long the scheduler's goroutine stays once the heap is
// empty, waiting for the next lease, before it exits.
const loopLinger = time.Second

// dueChunk bounds the events handled per hold of c.mu, so that renewal
// results are applied between chunks when very many events fall due at
// once.
const dueChunk = 512

// at (re)schedules e at when, starting the scheduler's goroutine if it is
// not running. c.mu must be held.
func (c *Client) at(e *event, when time.Time) {
	c.within(e, when, when)
}

// within (re)schedules e at when, and lets it run as late as latest: the
// loop is woken early only if the timer it sleeps on is set after latest.
// A renewal, whose time is jittered anyway, thus does not wake the loop
// when the timer already falls in its window (a client acquiring and
// releasing in a loop would otherwise wake it at every lease). c.mu must
// be held.
func (c *Client) within(e *event, when, latest time.Time) {
	e.when = when
	c.events.set(e, int64(when.Sub(c.epoch)))
	if !c.looping {
		c.looping = true
		c.loopDone = make(chan struct{})
		go c.loop(c.loopDone)
		return
	}
	if e.pos == 1 && latest.Before(c.armed) {
		c.poke() // later than e may wait: wake the loop to re-arm
	}
}

// in schedules e d from now. c.mu must be held.
func (c *Client) in(e *event, d time.Duration) {
	c.at(e, c.opts.Clock.Now().Add(d))
}

// renewIn schedules the renewal event e one renew interval from now, with
// the interval's jitter; it may run as late as the jitter's top. c.mu must
// be held.
func (c *Client) renewIn(e *event, interval time.Duration) {
	now := c.opts.Clock.Now()
	c.within(e, now.Add(jitter(interval, renewJitter)), now.Add(time.Duration(float64(interval)*(1+renewJitter))))
}

// unschedule removes e from the heap if it is there. c.mu must be held.
func (c *Client) unschedule(e *event) {
	if e.pos == 0 {
		return
	}
	c.events.remove(e)
	// A loop whose timer falls within loopLinger is not woken when the heap
	// is now empty: it lingers and exits then (or when Close pokes it). One
	// asleep on a later event's timer (the lease just released had armed
	// it) is woken, to start lingering now rather than at that time: at
	// most once per linger in an acquire-release loop.
	if len(c.events) == 0 && c.looping && !c.armed.IsZero() && c.armed.After(c.opts.Clock.Now().Add(loopLinger)) {
		c.poke()
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
		for ; n < dueChunk && len(c.events) > 0 && !c.events[0].e.when.After(cut); n++ {
			c.fire(c.events.pop(), cut)
		}
		if len(c.events) == 0 {
			// Linger a while before exiting, so that a client that
			// acquires and releases in a loop keeps its goroutine.
			if c.idleSince.IsZero() {
				c.idleSince = cut
			}
			if c.closed || cut.Sub(c.idleSince) >= loopLinger {
				c.looping = false
				c.armed = time.Time{}
				c.idleSince = time.Time{}
				c.stopIdleWatches() // no lease is held: every Lost watch is idle
				c.dropIdleGroups()  // and every batch group
				c.mu.Unlock()
				return time.Time{}, false
			}
			c.armed = c.idleSince.Add(loopLinger)
			c.mu.Unlock()
			return c.armed, true
		}
		c.idleSince = time.Time{}
		if n < dueChunk {
			c.armed = c.events[0].e.when
			c.mu.Unlock()
			return c.armed, true
		}
		c.mu.Unlock()
	}
}

// fire handles an event due at cut, which has left the heap. A deadline
// event is moved lazily: a renewal extends the lease's deadline without
// touching the heap, and the event, once due, is set again for the deadline
// as it now stands, or ends the lease if that has passed too. c.mu must be
// held.
func (c *Client) fire(e *event, cut time.Time) {
	switch e.kind {
	case evDeadline:
		if d := e.l.Deadline(); d.After(cut) {
			c.at(e, d)
			return
		}
		c.end(e.l, ErrExpired)
	case evRenew:
		c.renewAlone(e.l)
	case evBatch:
		c.renewBatch(e.g)
	case evFree:
		c.free(e.l)
	}
}
