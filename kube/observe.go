package kube

import (
	"slices"
	"sync"
	"time"
)

// maxObserved bounds the Leases a store remembers observations of.
// Forgetting one is always safe: the Lease is then judged held for one
// more TTL from the next look.
const maxObserved = 4096

// observations remember, per Lease, the resourceVersion last seen and when
// this process first saw it, on its monotonic clock: a lease is judged
// expired once its resourceVersion was seen unchanged for its TTL (as
// client-go's leaderelection judges a rival's Lease). No wall clock, the
// holder's or the server's, is trusted.
type observations struct {
	mu   sync.Mutex
	seen map[string]observed
}

type observed struct {
	rv   string
	at   time.Time // time.Now(): carries the monotonic clock reading
	ttl  time.Duration
	last time.Time // the latest look, for eviction
}

func newObservations() *observations {
	return &observations{seen: map[string]observed{}}
}

// remaining records a look at Lease name at resourceVersion rv with TTL
// ttl, made at now (after the read's reply arrived: the holder's last
// write was sent before it), and returns the time left before the lease
// counts as expired: ttl when rv is new, and ttl minus the time since rv
// was first seen otherwise (<= 0: expired).
func (o *observations) remaining(name, rv string, ttl time.Duration, now time.Time) time.Duration {
	o.mu.Lock()
	defer o.mu.Unlock()
	ob, ok := o.seen[name]
	if !ok || ob.rv != rv || ob.ttl != ttl {
		if !ok && len(o.seen) >= maxObserved {
			o.evictLocked()
		}
		o.seen[name] = observed{rv: rv, at: now, ttl: ttl, last: now}
		return ttl
	}
	ob.last = now
	o.seen[name] = ob
	return ttl - now.Sub(ob.at)
}

// forget drops what is known of Lease name (the store wrote it itself).
func (o *observations) forget(name string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	delete(o.seen, name)
}

// evictLocked drops the least recently looked-at half.
func (o *observations) evictLocked() {
	ts := make([]time.Time, 0, len(o.seen))
	for _, ob := range o.seen {
		ts = append(ts, ob.last)
	}
	slices.SortFunc(ts, time.Time.Compare)
	cut := ts[len(ts)/2]
	for name, ob := range o.seen {
		if !ob.last.After(cut) {
			delete(o.seen, name)
		}
	}
}
