package leasehold_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/leasehold-go/leasehold"
	"github.com/leasehold-go/leasehold/memory"
)

// The model-based target drives clients over one memory store, all on one
// fake clock, with a sequence of operations decoded from the input, and
// checks after each step what must hold whatever the sequence:
//   - at most one lease per key whose context is live, and the store names
//     it as the holder, with its token;
//   - every live lease's holder-side deadline is in the future and no later
//     than the store's expiry of its grant (so its context ends first);
//   - a lease whose deadline the clock has passed has its context ended;
//   - tokens strictly increase per key;
//   - Release and Client.Close end the lease's context.

const (
	modelClients = 3
	modelOpBytes = 2
	// modelSettle bounds the wait for the client's goroutines to act on a
	// clock step. It is not a timing check: a lease past its deadline whose
	// context never ends is the failure, and this only stops the wait.
	modelSettle = 10 * time.Second
)

var modelKeys = [...]string{"a", "b"}

var modelTTLs = [...]time.Duration{time.Second, 2 * time.Second, 5 * time.Second}

type modelLease struct {
	l      *leasehold.Lease
	client int
}

type model struct {
	t       *testing.T
	clock   *fakeClock
	store   *memory.Store
	clients [modelClients]*leasehold.Client
	leases  []modelLease
	tokens  map[string]uint64 // the highest token granted per key
}

func newModel(t *testing.T) *model {
	m := &model{t: t, clock: newFakeClock(), tokens: map[string]uint64{}}
	m.store = memory.New(&memory.Options{Now: m.clock.Now})
	for i := range m.clients {
		m.clients[i] = m.newClient()
	}
	return m
}

func (m *model) newClient() *leasehold.Client {
	c, err := leasehold.New(m.store, &leasehold.Options{Clock: m.clock, Label: "model"})
	if err != nil {
		m.t.Fatal(err)
	}
	return c
}

func (m *model) close() {
	for _, c := range m.clients {
		_ = c.Close()
	}
}

// step applies one operation, decoded from op and arg, and returns its
// description for the failure report.
func (m *model) step(op, arg byte) string {
	switch op % 5 {
	case 0:
		return m.acquire(int(arg)%modelClients, modelKeys[int(arg/modelClients)%len(modelKeys)], modelTTLs[int(arg/6)%len(modelTTLs)])
	case 1:
		return m.release(int(arg))
	case 2:
		return m.renew(int(arg))
	case 3:
		return m.closeClient(int(arg) % modelClients)
	default:
		d := time.Duration(arg) * 20 * time.Millisecond
		m.clock.Advance(d)
		return fmt.Sprintf("advance %s", d)
	}
}

func (m *model) acquire(ci int, key string, ttl time.Duration) string {
	what := fmt.Sprintf("client %d acquires %q for %s", ci, key, ttl)
	l, err := m.clients[ci].Acquire(context.Background(), key, leasehold.AcquireOptions{TTL: ttl})
	switch {
	case errors.Is(err, leasehold.ErrHeld):
		return what + ": held"
	case err != nil:
		m.t.Fatalf("%s: %v", what, err)
	}
	if l.Token() <= m.tokens[key] {
		m.t.Fatalf("%s: token %d, not above the key's earlier token %d", what, l.Token(), m.tokens[key])
	}
	m.tokens[key] = l.Token()
	m.leases = append(m.leases, modelLease{l: l, client: ci})
	return fmt.Sprintf("%s: token %d", what, l.Token())
}

func (m *model) release(i int) string {
	if len(m.leases) == 0 {
		return "release: no lease"
	}
	ml := m.leases[i%len(m.leases)]
	err := ml.l.Release(context.Background())
	what := fmt.Sprintf("release %q token %d: %v", ml.l.Key(), ml.l.Token(), err)
	if err != nil && !errors.Is(err, leasehold.ErrLost) {
		m.t.Fatalf("%s: want nil or ErrLost", what)
	}
	if ml.l.Err() == nil {
		m.t.Fatalf("%s: the lease's context is live after Release", what)
	}
	return what
}

// renew advances the clock to the latest moment lease i's renewal is due.
func (m *model) renew(i int) string {
	if len(m.leases) == 0 {
		return "renew: no lease"
	}
	ml := m.leases[i%len(m.leases)]
	d := m.clients[ml.client].Options().FirstRenewal(ml.l.TTL()) + time.Nanosecond
	m.clock.Advance(d)
	return fmt.Sprintf("advance %s to renew %q token %d", d, ml.l.Key(), ml.l.Token())
}

func (m *model) closeClient(ci int) string {
	if err := m.clients[ci].Close(); err != nil {
		m.t.Fatalf("close client %d: %v", ci, err)
	}
	for _, ml := range m.leases {
		if ml.client == ci && ml.l.Err() == nil {
			m.t.Fatalf("close client %d: lease %q token %d is still live", ci, ml.l.Key(), ml.l.Token())
		}
	}
	if _, err := m.clients[ci].Acquire(context.Background(), "a", leasehold.AcquireOptions{}); !errors.Is(err, leasehold.ErrClosed) {
		m.t.Fatalf("close client %d: a later acquire got %v, want ErrClosed", ci, err)
	}
	m.clients[ci] = m.newClient()
	return fmt.Sprintf("close client %d", ci)
}

// settle waits until no live lease's deadline has passed by the clock: the
// client has ended it, or a renewal in flight has moved its deadline.
func (m *model) settle(what string) {
	start := time.Now()
	now := m.clock.Now()
	for _, ml := range m.leases {
		for ml.l.Err() == nil && !ml.l.Deadline().After(now) {
			waited := time.Since(start)
			if waited > modelSettle {
				m.t.Fatalf("after %s: lease %q token %d is live at %s, past its deadline %s", what, ml.l.Key(), ml.l.Token(), now, ml.l.Deadline())
			}
			if waited > 100*time.Millisecond {
				// The scheduler may have armed its timer from a reading
				// of the clock made before the latest advances.
				m.clock.Kick(int(waited / (100 * time.Millisecond)))
			}
			time.Sleep(50 * time.Microsecond)
		}
	}
}

// check checks the invariants at the clock's present time.
func (m *model) check(what string) {
	now := m.clock.Now()
	live := map[string]*leasehold.Lease{}
	for _, ml := range m.leases {
		l := ml.l
		if l.Err() != nil {
			continue
		}
		if o := live[l.Key()]; o != nil {
			m.t.Fatalf("after %s: two live leases on %q: tokens %d and %d", what, l.Key(), o.Token(), l.Token())
		}
		live[l.Key()] = l
		dl := l.Deadline() // before the store's expiry: a renewal moves the store's first
		h, err := m.store.Holder(context.Background(), l.Key())
		if err != nil {
			if l.Err() != nil {
				continue // ended meanwhile by a renewal's refusal
			}
			m.t.Fatalf("after %s: lease %q token %d is live but the store says %v", what, l.Key(), l.Token(), err)
		}
		if h.Token != l.Token() {
			m.t.Fatalf("after %s: lease %q token %d is live but the store's holder has token %d", what, l.Key(), l.Token(), h.Token)
		}
		if expiry := now.Add(h.Remaining); dl.After(expiry) {
			m.t.Fatalf("after %s: lease %q token %d: holder's deadline %s is after the store's expiry %s", what, l.Key(), l.Token(), dl, expiry)
		}
	}
}

// runModel runs the operations ops encodes, two bytes each.
func runModel(t *testing.T, ops []byte) {
	m := newModel(t)
	defer m.close()
	for i := 0; i+modelOpBytes <= len(ops) && i < 200*modelOpBytes; i += modelOpBytes {
		what := m.step(ops[i], ops[i+1])
		m.settle(what)
		m.check(what)
	}
}

func FuzzClientModel(f *testing.F) {
	for _, seed := range [][]byte{
		{0, 0, 0, 3, 4, 10, 2, 0, 2, 0, 1, 0, 0, 3},         // acquire, contend, renew, release, reacquire
		{0, 0, 4, 255, 0, 3, 2, 1, 4, 200, 0, 1, 1, 1},      // expiry hands the key over
		{0, 0, 0, 1, 3, 0, 0, 3, 2, 0, 4, 100, 0, 0},        // close ends the leases, another takes the key
		{0, 12, 2, 0, 2, 0, 2, 0, 2, 0, 2, 0, 4, 250, 0, 2}, // a long TTL renewed many times
		{0, 6, 4, 49, 4, 1, 0, 7, 1, 0, 1, 1, 3, 1, 0, 0},   // deadlines at the edge
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, ops []byte) { runModel(t, ops) })
}
