package harness

import (
	"context"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/leasehold-go/leasehold/internal/testserver"

	"github.com/leasehold-go/leasehold/faults/check"
	"github.com/leasehold-go/leasehold/faults/history"
	"github.com/leasehold-go/leasehold/faults/netlab"
)

// partStore is a replicated store of three members in a lab of none (its
// cuts do nothing): member 0 leads, and a member that is isolated loses
// its leader (-1 on its first answer, the one of the cut) only if loses
// says so.
type partStore struct {
	netStore
	lab     *netlab.Lab
	members int
	loses   bool
	asked   int // LeaderSeen(1) calls
}

func (p *partStore) Lab() *netlab.Lab                          { return p.lab }
func (p *partStore) Members() int                              { return p.members }
func (p *partStore) LeaderMember(context.Context) (int, error) { return 0, nil }
func (p *partStore) AttachedMembers() []int                    { return []int{1} }
func (p *partStore) LeaderSeen(_ context.Context, i int) (int, error) {
	if i == 1 {
		p.asked++
		if p.loses && p.asked == 1 {
			return -1, nil
		}
	}
	return 0, nil
}

// The member partitions run on a store whose members are in the run's
// lab; every other store says why not, in its own words.
// killerStore is a replicated store that can kill its leader but whose
// members do not run in a lab.
type killerStore struct{ netStore }

func (*killerStore) KillLeader(context.Context) (string, error) { return "", nil }
func (*killerStore) RestartNode(context.Context, string) error  { return nil }

func TestMemberPartitionsApply(t *testing.T) {
	parts := []string{check.F13, check.F14, check.F15, check.F16}
	zk := &ZooKeeper{z: &testserver.ZooKeeper{Nodes: []*testserver.ZooKeeperNode{{ID: 1, Port: 1}}}}
	for _, c := range []struct {
		name string
		b    Backend
		why  string // "" when they run
	}{
		{"in a lab", &partStore{lab: &netlab.Lab{}, members: 3}, ""},
		{"no lab", &partStore{members: 3}, netlab.Env + "=off"},
		{"two members", &partStore{lab: &netlab.Lab{}, members: 2}, "a partition needs 3"},
		{"redlock", &Redlock{}, "masters are independent"},
		{"zookeeper without a lab", zk, netlab.Env + "=off"},
		{"a cluster outside the lab", &killerStore{}, "do not run in the run's network lab"},
		{"one server", &netStore{}, "a single server"},
	} {
		h := &harness{cfg: RunConfig{Backend: c.b, Faults: parts}}
		got := h.classes()
		if c.why == "" {
			if !slices.Equal(got, parts) || len(h.notes) != 0 {
				t.Errorf("%s: classes %v, notes %v; want %v", c.name, got, h.notes, parts)
			}
			continue
		}
		if len(got) != 0 || len(h.notes) != 4 {
			t.Errorf("%s: classes %v, notes %v; want none, 4 notes", c.name, got, h.notes)
		}
		for _, n := range h.notes {
			if !strings.Contains(n, "not run: ") || !strings.Contains(n, c.why) {
				t.Errorf("%s: note %q does not say %q", c.name, n, c.why)
			}
		}
	}
}

// An F14 episode whose isolated follower never loses its leader did not
// bite: the run is invalid. One whose follower loses it is valid.
func TestMinorityMustBite(t *testing.T) {
	for _, loses := range []bool{false, true} {
		p := &partStore{lab: &netlab.Lab{}, members: 3, loses: loses}
		h := &harness{cfg: RunConfig{Backend: p, TTL: 20 * time.Millisecond}, ctx: t.Context(),
			rec: history.NewMemRecorder("harness", nil), rng: rand.New(rand.NewPCG(1, 2))}
		if err := h.isolateMinority(); err != nil {
			t.Fatal(err)
		}
		if invalid := len(h.invalid) > 0; invalid == loses {
			t.Errorf("follower loses its leader %v: invalid %v (%q)", loses, invalid, h.invalid)
		}
		var phases []string
		for _, e := range h.rec.Events() {
			if e.Kind == history.EvFault && e.Fault == check.F14 {
				phases = append(phases, e.Phase)
			}
		}
		if !slices.Equal(phases, []string{"on", "off"}) {
			t.Errorf("F14 events %v, want on, off", phases)
		}
	}
}
