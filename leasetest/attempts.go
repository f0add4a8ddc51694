package leasetest

import (
	"strings"
	"sync"
	"testing"
	"time"
)

// maxAttempts is how many times a timing-dependent check runs before its
// inconclusive outcomes add up to a failure.
const maxAttempts = 3

// attempts runs a check whose outcome depends on the machine keeping time
// (a renewal sent every TTL/3 must be answered before the TTL runs out).
// The check calls t.Fatal for a real violation, and returns a non-empty
// reason when its premise did not hold: the machine or the store stalled
// for longer than the TTL allows, so a lost lease proves nothing about the
// store. Such an attempt is logged and tried again with fresh keys;
// maxAttempts inconclusive attempts in a row fail the test, so a store too
// slow for its TTL is reported, never skipped.
func (s *suite) attempts(t *testing.T, check func(t *testing.T) (inconclusive string)) {
	t.Helper()
	var reasons []string
	for i := 0; i < maxAttempts; i++ {
		why := check(t)
		if why == "" {
			return
		}
		t.Logf("attempt %d inconclusive: %s", i+1, why)
		reasons = append(reasons, why)
	}
	t.Fatalf("inconclusive %d times in a row (the store or the machine is too slow for a %s TTL; set Config.ShortTTL): %s",
		maxAttempts, s.ttl, strings.Join(reasons, "; "))
}

// stallWatch measures how late a 10 ms ticker runs: the longest time this
// process was not scheduled (a loaded machine, a GC pause, a slow disk
// holding a thread). It is how a check tells a starved machine from a store
// that refused a timely renewal.
type stallWatch struct {
	stop chan struct{}
	done chan struct{}
	mu   sync.Mutex
	max  time.Duration
}

const stallTick = 10 * time.Millisecond

func watchStalls() *stallWatch {
	w := &stallWatch{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(w.done)
		tk := time.NewTicker(stallTick)
		defer tk.Stop()
		last := time.Now()
		for {
			select {
			case <-w.stop:
				return
			case now := <-tk.C:
				// The channel holds the tick's scheduled time; lateness is
				// how long after it this goroutine got to run.
				late := time.Since(now)
				if gap := time.Since(last) - stallTick; gap > late {
					late = gap
				}
				last = time.Now()
				w.mu.Lock()
				if late > w.max {
					w.max = late
				}
				w.mu.Unlock()
			}
		}
	}()
	return w
}

// Max returns the longest stall seen so far.
func (w *stallWatch) Max() time.Duration {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.max
}

// Stop ends the watch and waits for its goroutine.
func (w *stallWatch) Stop() {
	close(w.stop)
	<-w.done
}
