package otel

import (
	"context"
	"slices"
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

// maxEarly bounds the ends holds remembers before their grants: a source
// of events that ends leases it never granted cannot grow it without limit.
const maxEarly = 1024

// holds keeps when each lease the observer saw granted was granted, until
// its loss or release, for the lease age gauge.
//
// A leasehold client reports a lease's grant before its end, but an
// observer may be given events by other means (wrappers that queue them,
// events made by hand): an end that arrives before its grant is kept, and
// the grant it ends is then never counted, so that the gauge cannot show a
// lease held forever that ended long ago.
type holds struct {
	mu    sync.Mutex
	since map[lease][]time.Time // grant send times; more than one only when two clients' leases collide
	early map[lease]int         // ends seen before their grants, by lease
	order []lease               // early's ends, oldest first, to forget the oldest beyond maxEarly
}

// add records a grant of l sent at sent, unless its end came first.
func (h *holds) add(l lease, sent time.Time) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.early[l] > 0 {
		h.forgetEarly(slices.Index(h.order, l))
		return
	}
	if h.since == nil {
		h.since = make(map[lease][]time.Time)
	}
	h.since[l] = append(h.since[l], sent)
}

// remove forgets the oldest grant of l (the lease ended), or, when none is
// held, remembers the end for the grant to come.
func (h *holds) remove(l lease) {
	h.mu.Lock()
	defer h.mu.Unlock()
	switch ts := h.since[l]; len(ts) {
	case 0:
		if h.early == nil {
			h.early = make(map[lease]int)
		}
		h.early[l]++
		h.order = append(h.order, l)
		if len(h.order) > maxEarly {
			h.forgetEarly(0)
		}
	case 1:
		delete(h.since, l)
	default:
		h.since[l] = ts[1:]
	}
}

// forgetEarly forgets the early end at h.order[i]. h.mu must be held.
func (h *holds) forgetEarly(i int) {
	l := h.order[i]
	h.order = slices.Delete(h.order, i, i+1)
	if h.early[l]--; h.early[l] == 0 {
		delete(h.early, l)
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
func (o *Observer) observeAges(_ context.Context, obs metric.Observer) error {
	now := o.clock.Now()
	for key, sent := range o.holds.oldest(o.keyAttr) {
		obs.ObserveFloat64(o.age, now.Sub(sent).Seconds(), o.attrs(key))
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
