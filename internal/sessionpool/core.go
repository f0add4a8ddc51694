package sessionpool

import (
	"sync"
	"time"
)

// Config is what a Core needs of its store, given to Init.
type Config[K comparable, G any, O any] struct {
	// Class is the TTL granted to leases of the session's class.
	Class time.Duration
	// Idle is the store's IdleTimeout: how long a session with no grants,
	// references or pending work is kept; below zero, it ends as soon as it
	// is idle (an idle session then wakes its housekeeping at once).
	Idle time.Duration
	// Forget removes the session from its Pool (Pool.Forget).
	Forget func()
	// Orphan returns the orphan a grant past its deadline leaves, for the
	// sweep to clean up on the server.
	Orphan func(k K, g G) O
	// OnHalt, if set, runs once when the session's goroutines are told to
	// end (after Stop closes).
	OnHalt func()
	// PokeOnOrphan and PokeOnTrack wake housekeeping when an orphan is
	// queued or a grant tracked.
	PokeOnOrphan, PokeOnTrack bool
}

// Core is the bookkeeping a store's session of one TTL class keeps, shared
// by the etcd, Consul and ZooKeeper stores: its set-up outcome, its
// references, whether it is up, lost or gone, the lower bound of its
// expiry on the server, the table of its grants with their deadlines, the
// acquires in progress, and the orphans housekeeping must clean up. A
// store's session embeds a Core, calls Init once before using it, and
// keeps only its server calls.
//
// Locking: Mu guards the Core's mutable state and whatever the store keeps
// beside it under the same mutex (see the Locked methods). Code holding
// the Pool's mutex may take Mu (Hold does); code holding Mu never takes the
// Pool's (Forget is always called after Mu is released).
type Core[K comparable, G any, O any] struct {
	cfg Config[K, G, O]

	up    chan struct{} // closed when set-up has finished; upErr says how
	upErr error

	lost     chan struct{} // closed when the session is known or presumed gone
	lostOnce sync.Once
	lostErr  error // why, if known; set before lost closes
	stop     chan struct{}
	stopOnce sync.Once
	kick     chan struct{}

	// Mu guards the fields below, and the store's own state it says is
	// under the session's mutex.
	Mu       sync.Mutex
	expiry   time.Time // lower bound of the session's end on the server, by our monotonic clock
	grants   map[K]*Entry[G]
	inflight map[K]int // acquires (and etcd's releases) in progress
	orphans  []O
	refs     int
	lastUse  time.Time
	gone     bool // lost, torn down or closed: takes no new references
	running  bool // goroutines started
}

// Entry is a tracked grant and its deadline (guarded by the Core's Mu).
type Entry[G any] struct {
	Grant    G
	deadline time.Time // the grant expires here unless renewed
}

// Init readies c for a session of cfg.Class with one reference, its
// creator's. It is called once, before c is used.
func (c *Core[K, G, O]) Init(cfg Config[K, G, O]) {
	c.cfg = cfg
	c.up = make(chan struct{})
	c.lost = make(chan struct{})
	c.stop = make(chan struct{})
	c.kick = make(chan struct{}, 1)
	c.grants = make(map[K]*Entry[G])
	c.inflight = make(map[K]int)
	c.refs = 1
	c.lastUse = time.Now()
}

// Class returns the session's TTL class.
func (c *Core[K, G, O]) Class() time.Duration { return c.cfg.Class }

// SetUpWith runs a session's set-up for Session.SetUp, then closes Up's
// channel. start does the server's part and returns why it failed, if it
// did; launch then starts the session's goroutines unless the store is
// closed (Pool.WhileOpen). If start fails the session is retired with its
// error; if launch finds the store closed, with closedErr, and undo ends
// what start made on the server.
func (c *Core[K, G, O]) SetUpWith(start func() error, launch func() bool, undo func(), closedErr func() error) {
	defer close(c.up)
	if err := start(); err != nil {
		c.upErr = err
		c.Retire()
		return
	}
	if !launch() {
		c.upErr = closedErr()
		c.Retire()
		undo()
	}
}

// Up returns a channel closed once set-up has finished; UpErr says how.
func (c *Core[K, G, O]) Up() <-chan struct{} { return c.up }

// UpErr reports why set-up failed, or nil. It is read once Up is closed.
func (c *Core[K, G, O]) UpErr() error { return c.upErr }

// IsUp reports whether set-up has finished well and the session is not
// gone.
func (c *Core[K, G, O]) IsUp() bool {
	select {
	case <-c.up:
	default:
		return false
	}
	c.Mu.Lock()
	defer c.Mu.Unlock()
	return c.upErr == nil && !c.gone
}

// Started records that the session's goroutines are starting, with expiry
// the first lower bound of its end on the server (zero if the store does
// not track one). The store calls it from Pool.WhileOpen.
func (c *Core[K, G, O]) Started(expiry time.Time) {
	c.Mu.Lock()
	defer c.Mu.Unlock()
	c.expiry = expiry
	c.lastUse = time.Now()
	c.running = true
}

// Hold takes a reference on the session, for an acquire, a wait or a
// watch. It fails if the session is gone.
func (c *Core[K, G, O]) Hold() bool {
	c.Mu.Lock()
	defer c.Mu.Unlock()
	if c.gone {
		return false
	}
	c.refs++
	return true
}

// Drop drops a reference taken by Hold (or the creator's).
func (c *Core[K, G, O]) Drop() {
	c.Mu.Lock()
	c.refs--
	c.lastUse = time.Now()
	idle := c.idleLocked()
	c.Mu.Unlock()
	c.pokeIf(idle)
}

// idleLocked reports whether the session has no references and no grants.
// Caller holds Mu.
func (c *Core[K, G, O]) idleLocked() bool { return c.refs == 0 && len(c.grants) == 0 }

// pokeIf wakes housekeeping if the session was found idle and the store
// ends idle sessions at once. Caller does not hold Mu.
func (c *Core[K, G, O]) pokeIf(idle bool) {
	if idle && c.cfg.Idle < 0 {
		c.Poke()
	}
}

// Done returns a channel closed when the session is known or presumed gone
// on the server: every grant on it is lost. It is each grant's Grant.Lost.
func (c *Core[K, G, O]) Done() <-chan struct{} { return c.lost }

// IsLost reports whether the session has been lost.
func (c *Core[K, G, O]) IsLost() bool {
	select {
	case <-c.lost:
		return true
	default:
		return false
	}
}

// LostErr says why the session was lost, if the store said (MarkLost);
// it is read once Done is closed.
func (c *Core[K, G, O]) LostErr() error { return c.lostErr }

// MarkLost records that the session is gone on the server, for why (nil:
// not known): its grants and orphans are dropped, it is removed from its
// Pool, Done closes and its goroutines end. locked, if not nil, runs
// holding Mu (the store drops what it keeps beside the grants). It reports
// whether this call marked it (false: it was already lost).
func (c *Core[K, G, O]) MarkLost(why error, locked func()) (first bool) {
	c.lostOnce.Do(func() {
		c.lostErr = why
		c.Mu.Lock()
		c.gone = true
		c.grants = map[K]*Entry[G]{}
		c.orphans = nil
		if locked != nil {
			locked()
		}
		c.Mu.Unlock()
		c.cfg.Forget()
		close(c.lost)
		c.Halt()
		first = true
	})
	return first
}

// Retire marks the session gone and removes it from its Pool.
func (c *Core[K, G, O]) Retire() {
	c.Mu.Lock()
	c.gone = true
	c.Mu.Unlock()
	c.cfg.Forget()
}

// Shut marks the session gone and ends its goroutines, for the store's
// Close (the Pool has already let it go). It reports whether the session
// had started and was not gone, and whether it holds grants: the store then
// ends it on the server, or leaves its grants to expire.
func (c *Core[K, G, O]) Shut() (started, holding bool) {
	c.Mu.Lock()
	started = c.running && !c.gone
	holding = len(c.grants) > 0
	c.gone = true
	c.Mu.Unlock()
	c.Halt()
	return started, holding
}

// Halt tells the session's goroutines to end.
func (c *Core[K, G, O]) Halt() {
	c.stopOnce.Do(func() {
		close(c.stop)
		if c.cfg.OnHalt != nil {
			c.cfg.OnHalt()
		}
	})
}

// Stop returns a channel closed when the session's goroutines must end.
func (c *Core[K, G, O]) Stop() <-chan struct{} { return c.stop }

// Poke wakes the housekeeping goroutine.
func (c *Core[K, G, O]) Poke() {
	select {
	case c.kick <- struct{}{}:
	default:
	}
}

// GoneLocked reports whether the session is gone. Caller holds Mu.
func (c *Core[K, G, O]) GoneLocked() bool { return c.gone }
