package postgres

import (
	"sync"
	"time"
)

// watchQueue starts the connection watchers of an AdvisoryStore's leases
// (advLease.beginWatch) once they have been idle for watchDelay. One
// goroutine per store serves it, and only while starts are pending: it
// sleeps until the earliest start is due. A lease that goes idle (after its
// acquire or a renewal) appends to the queue and touches no timer, so a
// short acquire+release cycle costs no runtime timer and no wake-up of the
// Go scheduler's poller: a timer per lease (time.AfterFunc, then Stop on
// release) did, on every cycle.
type watchQueue struct {
	mu      sync.Mutex
	q       []watchStart // in due order (due = enqueue time + watchDelay)
	running bool         // the goroutine runs
	closed  bool
	stop    chan struct{} // closed by close
	wg      sync.WaitGroup
}

// A watchStart asks for l's watcher from due on, if l's watch generation is
// still gen then (a stopWatch in between voids it).
type watchStart struct {
	l   *advLease
	gen uint64
	due time.Time
}

func newWatchQueue() *watchQueue { return &watchQueue{stop: make(chan struct{})} }

// add queues a start, and starts the goroutine if it is not running.
func (w *watchQueue) add(s watchStart) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return
	}
	w.q = append(w.q, s)
	if !w.running {
		w.running = true
		w.wg.Add(1)
		go w.run()
	}
}

// run starts the watchers that are due, sleeping until the next is, and
// returns when the queue is empty or the queue is closed.
func (w *watchQueue) run() {
	defer w.wg.Done()
	t := time.NewTimer(watchDelay)
	defer t.Stop()
	for {
		select {
		case <-w.stop:
			return
		case <-t.C:
		}
		due, next, more := w.take(time.Now())
		for _, s := range due {
			s.l.beginWatchIf(s.gen)
		}
		if !more {
			return
		}
		t.Reset(next)
	}
}

// take removes the starts due at now. more is false (and the goroutine
// marked stopped) when nothing is left; otherwise next is the wait until
// the earliest start left.
func (w *watchQueue) take(now time.Time) (due []watchStart, next time.Duration, more bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	i := 0
	for i < len(w.q) && !w.q[i].due.After(now) {
		i++
	}
	due = append([]watchStart(nil), w.q[:i]...)
	n := copy(w.q, w.q[i:])
	clear(w.q[n:])
	w.q = w.q[:n]
	if n == 0 {
		w.running = false
		return due, 0, false
	}
	return due, max(w.q[0].due.Sub(now), time.Millisecond), true
}

// close stops the goroutine and waits for it; later adds do nothing.
func (w *watchQueue) close() {
	w.mu.Lock()
	if !w.closed {
		w.closed = true
		close(w.stop)
	}
	w.q = nil
	w.mu.Unlock()
	w.wg.Wait()
}
