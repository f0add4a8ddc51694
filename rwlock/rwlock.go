package rwlock

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"time"

	"github.com/leasehold-go/leasehold"
)

// DefaultReaders is the number of reader slots when Options.Readers is 0.
const DefaultReaders = 8

// MaxReaders bounds Options.Readers: a writer reads every slot each time it
// looks for readers.
const MaxReaders = 256

// ErrInvalidOptions: an Options field is out of range.
var ErrInvalidOptions = errors.New("rwlock: invalid options")

// Options configure a Lock. The zero value means the client's TTL and
// DefaultReaders slots.
type Options struct {
	// TTL is the TTL of every lease the lock takes (the gate, the reader
	// slots); 0 means the client's.
	TTL time.Duration
	// Readers is the number of reader slots, the most readers that can
	// hold the lock at once; 0 means DefaultReaders. Every process using
	// the lock must use the same number (a writer only looks at the slots
	// it knows of).
	Readers int
}

// Lock is one read-write lock: its key, and the client that takes its
// leases. Its methods are safe for concurrent use.
type Lock struct {
	c     *leasehold.Client
	key   string
	gate  string
	slots []string
	ttl   time.Duration
}

// New returns the read-write lock on key, taking its leases through c. A
// nil opts means the defaults. The lock uses the keys key+"/w" (the gate)
// and key+"/r/0" to key+"/r/N-1" (the reader slots).
func New(c *leasehold.Client, key string, opts *Options) (*Lock, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Readers == 0 {
		o.Readers = DefaultReaders
	}
	if o.Readers < 1 || o.Readers > MaxReaders {
		return nil, fmt.Errorf("%w: Readers %d is outside [1, %d]", ErrInvalidOptions, o.Readers, MaxReaders)
	}
	if o.TTL < 0 || o.TTL > leasehold.MaxTTL {
		return nil, fmt.Errorf("%w: TTL %s is outside [0, %s]", ErrInvalidOptions, o.TTL, leasehold.MaxTTL)
	}
	if o.TTL == 0 {
		o.TTL = c.Options().TTL
	}
	if err := leasehold.ValidateKey(key); err != nil {
		return nil, err
	}
	l := &Lock{c: c, key: key, gate: key + "/w", ttl: o.TTL}
	for i := range o.Readers {
		l.slots = append(l.slots, key+"/r/"+strconv.Itoa(i))
	}
	if err := leasehold.ValidateKey(l.slots[len(l.slots)-1]); err != nil {
		return nil, err
	}
	return l, nil
}

// Key returns the lock's key.
func (l *Lock) Key() string { return l.key }

// RLock takes the lock for reading: it passes through the gate (key+"/w",
// which a writer holds for as long as it waits and writes), takes a free
// reader slot while it still holds the gate, and lets the gate go. The
// hold's write epoch is the gate's token. With a zero wait it tries once
// and returns a *leasehold.HeldError when a writer holds or waits, or every
// slot is taken; a positive wait retries up to that long;
// leasehold.WaitForever waits until ctx ends.
func (l *Lock) RLock(ctx context.Context, wait time.Duration) (*Hold, error) {
	w, err := newWaiting(l.c, wait)
	if err != nil {
		return nil, err
	}
	for attempt := 1; ; attempt++ {
		gate, err := l.c.Acquire(ctx, l.gate, leasehold.AcquireOptions{TTL: l.ttl, Wait: w.left()})
		if err != nil {
			return nil, err
		}
		slot, err := l.takeSlot(ctx)
		if slot != nil {
			// The gate must have been ours until after the slot was: a
			// writer that took the gate since would not see this reader.
			if cerr := gate.Checkpoint(0); cerr != nil {
				_ = slot.Release(ctx)
				slot, err = nil, cerr
			}
		}
		_ = gate.Release(ctx) // a failed release ends with the gate's TTL
		if slot != nil {
			return &Hold{mode: Read, epoch: gate.Token(), lease: slot}, nil
		}
		if !errors.Is(err, leasehold.ErrHeld) && !errors.Is(err, leasehold.ErrLost) {
			return nil, err
		}
		if !w.pause(ctx, nil, attempt, l.ttl) {
			return nil, w.ended(ctx, err)
		}
	}
}

// takeSlot tries each reader slot once, from a random one, and returns the
// first it gets, or the last *leasehold.HeldError when all are taken.
func (l *Lock) takeSlot(ctx context.Context) (*leasehold.Lease, error) {
	start := rand.IntN(len(l.slots)) // spread readers over the slots
	var last error
	for i := range l.slots {
		k := l.slots[(start+i)%len(l.slots)]
		s, err := l.c.Acquire(ctx, k, leasehold.AcquireOptions{TTL: l.ttl})
		if err == nil {
			return s, nil
		}
		if !errors.Is(err, leasehold.ErrHeld) {
			return nil, err
		}
		last = err
	}
	return nil, last
}

// Lock takes the lock for writing: it takes the gate (key+"/w"), which
// stops new readers, then waits, holding it, until no reader slot is held.
// The hold's write epoch and token are the gate's token. With a zero wait
// it tries once and returns a *leasehold.HeldError naming the gate's holder
// or a reader; a positive wait waits up to that long in all;
// leasehold.WaitForever waits until ctx ends.
func (l *Lock) Lock(ctx context.Context, wait time.Duration) (*Hold, error) {
	w, err := newWaiting(l.c, wait)
	if err != nil {
		return nil, err
	}
	gate, err := l.c.Acquire(ctx, l.gate, leasehold.AcquireOptions{TTL: l.ttl, Wait: w.left()})
	if err != nil {
		return nil, err
	}
	if err := l.drain(ctx, gate, w); err != nil {
		_ = gate.Release(ctx)
		return nil, err
	}
	return &Hold{mode: Write, epoch: gate.Token(), lease: gate}, nil
}

// drain waits until no reader slot is held while gate is held, as w
// allows.
func (l *Lock) drain(ctx context.Context, gate *leasehold.Lease, w *waiting) error {
	for attempt := 1; ; attempt++ {
		err := l.reader(ctx)
		if err == nil {
			// The gate was ours from before the slots were read until
			// after: no reader can have come in since.
			return gate.Checkpoint(0)
		}
		if !errors.Is(err, leasehold.ErrHeld) && !errors.Is(err, leasehold.ErrStore) {
			return err
		}
		if !w.pause(ctx, gate.Done(), attempt, l.ttl) {
			if gerr := gate.Err(); gerr != nil {
				return gerr
			}
			return w.ended(ctx, err)
		}
	}
}

// reader returns nil when no reader slot is held, and a *leasehold.HeldError
// naming a reader otherwise.
func (l *Lock) reader(ctx context.Context) error {
	for _, k := range l.slots {
		h, err := l.c.Store().Holder(ctx, k)
		switch {
		case err == nil:
			return &leasehold.HeldError{Key: k, Label: h.Label, Token: h.Token, Remaining: h.Remaining}
		case !errors.Is(err, leasehold.ErrNotHeld):
			return err
		}
	}
	return nil
}
