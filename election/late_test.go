package election_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/election"
	"github.com/leasehold-go/leasehold/memory"
)

// jumpClock is the system clock moved forward by a minute from the n-th
// reading after arm(n): a stall of the process between two readings.
type jumpClock struct {
	mu   sync.Mutex
	off  time.Duration
	left int // readings until the jump; 0: none armed
}

func (c *jumpClock) arm(n int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.left = n
}

func (c *jumpClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.left > 0 {
		if c.left--; c.left == 0 {
			c.off += time.Minute
		}
	}
	return time.Now().Add(c.off)
}

func (c *jumpClock) NewTimer(d time.Duration) leasehold.Timer {
	return leasehold.SystemClock().NewTimer(d)
}

// stallOnce wraps a memory store: after its first grant it arms the
// clock to jump at the given reading, so that the client finds that grant
// past the holder's deadline: on arrival (reading 1) or just after, as it
// starts the lease (reading 2). It records the grants released.
type stallOnce struct {
	*memory.Store
	clock    *jumpClock
	reading  int
	mu       sync.Mutex
	first    leasehold.Grant
	released []leasehold.Grant
}

func (s *stallOnce) Acquire(ctx context.Context, r leasehold.AcquireRequest) (leasehold.Grant, error) {
	g, err := s.Store.Acquire(ctx, r)
	s.mu.Lock()
	defer s.mu.Unlock()
	if err == nil && s.first.Token == 0 {
		s.first = g
		s.clock.arm(s.reading)
	}
	return g, err
}

func (s *stallOnce) Release(ctx context.Context, g leasehold.Grant) error {
	s.mu.Lock()
	s.released = append(s.released, g)
	s.mu.Unlock()
	return s.Store.Release(ctx, g)
}

// A campaign whose grant turns out to be past the holder's deadline, on
// arrival or as the lease starts, releases it and campaigns on: it leads
// with a greater epoch, on a live lease, never on the late grant.
func TestCampaignSkipsLateGrant(t *testing.T) {
	for _, reading := range []int{1, 2} {
		clk := &jumpClock{}
		st := &stallOnce{Store: memory.New(nil), clock: clk, reading: reading}
		c, err := leasehold.New(st, &leasehold.Options{Clock: clk})
		if err != nil {
			t.Fatal(err)
		}
		e, err := election.New(c, "leader", &election.Options{TTL: time.Second})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		l, err := e.Campaign(ctx)
		cancel()
		if err != nil {
			t.Fatalf("reading %d: Campaign after a late grant: %v, want leadership", reading, err)
		}
		st.mu.Lock()
		first, released := st.first, append([]leasehold.Grant(nil), st.released...)
		st.mu.Unlock()
		if l.Epoch() <= first.Token || l.Context().Err() != nil {
			t.Errorf("reading %d: leads with epoch %d (context %v), want a live lease above the late grant's %d", reading, l.Epoch(), l.Context().Err(), first.Token)
		}
		if len(released) != 1 || released[0].Token != first.Token {
			t.Errorf("reading %d: released %+v, want the late grant %+v alone", reading, released, first)
		}
		_ = l.Resign(context.Background())
		_ = c.Close()
	}
}
