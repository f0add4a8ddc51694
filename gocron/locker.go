package gocron

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	gocronv2 "github.com/go-co-op/gocron/v2"

	"github.com/leasehold-go/leasehold"
)

// DefaultPrefix is the prefix of a Locker's keys when
// LockerOptions.Prefix is empty.
const DefaultPrefix = "gocron/"

// LockerOptions configure a Locker. The zero value locks the job's name
// under DefaultPrefix with the client's TTL and no MinHold.
type LockerOptions struct {
	// Prefix is put before every key; empty means DefaultPrefix.
	Prefix string
	// TTL of the leases; zero means the client's.
	TTL time.Duration
	// Period, when positive, keys each run by its tick: the lock's key is
	// leasehold.TickKey(Prefix+name, now, Period), so every scheduler
	// that runs the job for one tick asks for the same key, and the next
	// tick's key is another one (a run that overruns its period does not
	// keep the next from starting). It should be the job's period.
	Period time.Duration
	// MinHold keeps each lock for at least this long after its grant,
	// though the job returned earlier (leasehold.AcquireOptions.MinHold):
	// longer than the schedulers' clocks differ, shorter than the
	// period. Zero means Period/2 with a Period, and none without one.
	MinHold time.Duration
}

// Locker is a gocron.Locker over a leasehold Client. Its methods are safe
// for concurrent use.
type Locker struct {
	c    *leasehold.Client
	opts LockerOptions

	mu   sync.Mutex
	held map[context.Context][]*leasehold.Lease // by the job's context
}

var _ gocronv2.Locker = (*Locker)(nil)

// NewLocker returns a Locker acquiring through c. A nil opts means the
// defaults. It refuses a negative duration or one above leasehold.MaxTTL.
func NewLocker(c *leasehold.Client, opts *LockerOptions) (*Locker, error) {
	var o LockerOptions
	if opts != nil {
		o = *opts
	}
	for _, f := range []struct {
		name string
		d    time.Duration
	}{{"TTL", o.TTL}, {"Period", o.Period}, {"MinHold", o.MinHold}} {
		if f.d < 0 || f.d > leasehold.MaxTTL {
			return nil, fmt.Errorf("gocron: LockerOptions.%s %s is outside [0, %s]", f.name, f.d, leasehold.MaxTTL)
		}
	}
	if o.Prefix == "" {
		o.Prefix = DefaultPrefix
	}
	if o.MinHold == 0 && o.Period > 0 {
		o.MinHold = o.Period / 2
	}
	return &Locker{c: c, opts: o, held: make(map[context.Context][]*leasehold.Lease)}, nil
}

// Key returns the key a lock of the job named name takes at now.
func (l *Locker) Key(name string, now time.Time) string {
	if l.opts.Period > 0 {
		return leasehold.TickKey(l.opts.Prefix+name, now, l.opts.Period)
	}
	return l.opts.Prefix + name
}

// Lock implements gocron.Locker: it tries once to acquire the job's key
// (Key at the client's now) and returns a *Lock, or the acquire's error
// (a *leasehold.HeldError when another scheduler runs the job), on which
// gocron skips the run. ctx is the job's context.
func (l *Locker) Lock(ctx context.Context, name string) (gocronv2.Lock, error) {
	key := l.Key(name, l.c.Options().Clock.Now())
	lease, err := l.c.Acquire(ctx, key, leasehold.AcquireOptions{TTL: l.opts.TTL, MinHold: l.opts.MinHold})
	if err != nil {
		return nil, err
	}
	l.mu.Lock()
	l.held[ctx] = append(l.held[ctx], lease)
	l.mu.Unlock()
	return &Lock{locker: l, ctx: ctx, lease: lease}, nil
}

// current returns the latest lease held for the job whose context is ctx.
func (l *Locker) current(ctx context.Context) *leasehold.Lease {
	l.mu.Lock()
	defer l.mu.Unlock()
	if ls := l.held[ctx]; len(ls) > 0 {
		return ls[len(ls)-1]
	}
	return nil
}

// forget drops lease from the job's held leases.
func (l *Locker) forget(ctx context.Context, lease *leasehold.Lease) {
	l.mu.Lock()
	defer l.mu.Unlock()
	ls := l.held[ctx]
	for i, x := range ls {
		if x == lease {
			ls = append(ls[:i], ls[i+1:]...)
			break
		}
	}
	if len(ls) == 0 {
		delete(l.held, ctx)
	} else {
		l.held[ctx] = ls
	}
}

// Lock is a lock a Locker took: a gocron.Lock over a leasehold lease.
type Lock struct {
	locker *Locker
	ctx    context.Context
	lease  *leasehold.Lease
}

var _ gocronv2.Lock = (*Lock)(nil)

// Lease returns the lock's lease (its token fences the job's writes).
func (k *Lock) Lease() *leasehold.Lease { return k.lease }

// Unlock implements gocron.Lock: it releases the lease (kept in the store
// until its MinHold has passed). It returns nil, or the
// *leasehold.LostError when the lease was lost while the job ran, or the
// store's error.
func (k *Lock) Unlock(ctx context.Context) error {
	k.locker.forget(k.ctx, k.lease)
	return k.lease.Release(ctx)
}

// ErrNoLease is Guard's error when the job runs without a lease: its
// context is not the one gocron gave the Locker (the job's task takes no
// context.Context first, or the job runs outside gocron), or the
// scheduler has no Locker (or Elector) set.
var ErrNoLease = errors.New("gocron: the job runs without a lease")
