package harness

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/leasehold-go/leasehold/faults/check"
	"github.com/leasehold-go/leasehold/faults/history"
	"github.com/leasehold-go/leasehold/faults/netlab"
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

// moverStore is a partStore whose attached member 1 leads until
// MoveLeader hands the leadership to member 0.
type moverStore struct {
	partStore
	moved bool
}

func (m *moverStore) LeaderMember(context.Context) (int, error) {
	if m.moved {
		return 0, nil
	}
	return 1, nil
}

func (m *moverStore) MoveLeader(_ context.Context, from int) (int, error) {
	if from != 1 {
		return -1, fmt.Errorf("move from %d, the leader is 1", from)
	}
	m.moved = true
	return 0, nil
}

// F14 isolates the holders' member even when it leads, where the store can
// move the leadership off it first (LeaderMover): Consul's front.
func TestMinorityIsTheAttachedMember(t *testing.T) {
	m := &moverStore{partStore: partStore{lab: &netlab.Lab{}, members: 3, loses: true}}
	h := &harness{cfg: RunConfig{Backend: m, TTL: 20 * time.Millisecond}, ctx: t.Context(),
		rec: history.NewMemRecorder("harness", nil), rng: rand.New(rand.NewPCG(1, 2))}
	if err := h.isolateMinority(); err != nil {
		t.Fatal(err)
	}
	if !m.moved || len(h.invalid) > 0 {
		t.Fatalf("moved %v, invalid %q", m.moved, h.invalid)
	}
	for _, e := range h.rec.Events() {
		if e.Kind == history.EvFault && e.Fault == check.F14 && e.Phase == "on" && !strings.HasPrefix(e.Note, "member 1 (a follower) isolated") {
			t.Fatalf("F14 %q: not the attached member 1", e.Note)
		}
	}
}
