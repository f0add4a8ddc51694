package otel

import (
	"context"
	"sync"
	"time"

	"github.com/leasehold-go/leasehold"
	"go.opentelemetry.io/otel/metric"
)

// lease names a held lease: its key and token (a token alone can repeat
// across keys, and across the stores of clients sharing an observer).
type lease struct {
	key   string
	token uint64
}

// holds keeps when each lease the observer saw granted was granted, until
// its loss or release, for the lease age gauge.
type holds struct {
	mu    sync.Mutex
	since map[lease][]time.Time // grant send times; more than one only when two clients' leases collide
}

// add records a grant of l sent at sent.
func (h *holds) add(l lease, sent time.Time) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.since == nil {
		h.since = make(map[lease][]time.Time)
	}
	h.since[l] = append(h.since[l], sent)
}

// remove forgets the oldest grant of l (the lease ended).
func (h *holds) remove(l lease) {
	h.mu.Lock()
	defer h.mu.Unlock()
	switch ts := h.since[l]; len(ts) {
	case 0:
	case 1:
		delete(h.since, l)
	default:
		h.since[l] = ts[1:]
	}
}

// oldest returns the send time of the oldest grant held, by key when byKey
// (else under the key ""); keys with nothing held are absent.
func (h *holds) oldest(byKey bool) map[string]time.Time {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make(map[string]time.Time)
	for l, ts := range h.since {
		k := ""
		if byKey {
			k = l.key
		}
		for _, t := range ts {
			if o, ok := out[k]; !ok || t.Before(o) {
				out[k] = t
			}
		}
	}
	return out
}

// observeAges is the lease age gauge's callback: the age, now, of the
// oldest lease held (by key with KeyAttribute); nothing when none is held.
func (o *Observer) observeAges(_ context.Context, obs metric.Float64Observer) error {
	now := o.clock.Now()
	for key, sent := range o.holds.oldest(o.keyAttr) {
		obs.Observe(now.Sub(sent).Seconds(), o.attrs(key))
	}
	return nil
}

// granted starts the age of the lease an acquire event granted.
func (o *Observer) granted(e leasehold.Event) {
	o.holds.add(lease{e.Key, e.Token}, o.clock.Now().Add(-e.Held))
}

// ended stops the age of the lease a loss or release event ended.
func (o *Observer) ended(e leasehold.Event) {
	o.holds.remove(lease{e.Key, e.Token})
}
