package harness

import (
	"testing"
	"time"
)

// pacedStore is a partStore with a pace of its own.
type pacedStore struct {
	partStore
	hold, flap time.Duration
}

func (p *pacedStore) PartitionPace(time.Duration) (time.Duration, time.Duration) {
	return p.hold, p.flap
}

// The member partitions keep the default pace (2.5 x TTL, TTL/2) unless
// the store has its own; Consul's holds a cut for two session renewal
// periods + 1 s (at least 2.5 x TTL) and its flaps last 1.5 x its Raft
// heartbeat timeout.
func TestPartitionPace(t *testing.T) {
	for _, c := range []struct {
		name string
		b    interface {
			Backend
			MemberPartitioner
		}
		ttl        time.Duration
		hold, flap time.Duration
	}{
		{"default", &partStore{}, 750 * time.Millisecond, 1875 * time.Millisecond, 375 * time.Millisecond},
		{"own", &pacedStore{hold: 7 * time.Second, flap: time.Second}, 750 * time.Millisecond, 7 * time.Second, time.Second},
		// class 1 s, session 10 s, renewals every 4.5 s
		{"consul short", &Consul{}, 750 * time.Millisecond, 10 * time.Second, 1500 * time.Millisecond},
		{"consul long", &Consul{}, time.Second, 10 * time.Second, 1500 * time.Millisecond},
		// class 3 s, session 10 s, renewals every 3.5 s: 8 s
		{"consul 3s", &Consul{}, 3 * time.Second, 8 * time.Second, 1500 * time.Millisecond},
		// class 5 s, session 10 s, renewals every 2.5 s: 6 s < 2.5 x TTL
		{"consul 5s", &Consul{}, 5 * time.Second, 12500 * time.Millisecond, 1500 * time.Millisecond},
	} {
		h := &harness{cfg: RunConfig{Backend: c.b, TTL: c.ttl}}
		if hold, flap := h.pace(c.b); hold != c.hold || flap != c.flap {
			t.Errorf("%s: hold %s, flap %s; want %s, %s", c.name, hold, flap, c.hold, c.flap)
		}
	}
}
