package election

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/leasehold-go/leasehold"
)

// ErrNotLeader means the leadership has ended: RunIfLeader did not run its
// function.
var ErrNotLeader = errors.New("election: not the leader")

// Options configure an Election. The zero value means the client's TTL, a
// poll every third of it, and a campaign backoff of a tenth of it.
type Options struct {
	// TTL is the TTL of the leadership's lease; 0 means the client's.
	TTL time.Duration
	// PollInterval is the longest Observe goes without reading the leader
	// on a store without a native watch; 0 means a third of the TTL.
	PollInterval time.Duration
	// Backoff is how long Run waits, at most (it picks a random delay up to
	// it), before campaigning again after its leadership ended; 0 means a
	// tenth of the TTL.
	Backoff time.Duration
}

// Election is one election: its key, and the client that campaigns on it.
// Its methods are safe for concurrent use.
type Election struct {
	c    *leasehold.Client
	key  string
	opts Options
}

// New returns the election on key, campaigning through c. A nil opts means
// the defaults.
func New(c *leasehold.Client, key string, opts *Options) (*Election, error) {
	if err := leasehold.ValidateKey(key); err != nil {
		return nil, err
	}
	var o Options
	if opts != nil {
		o = *opts
	}
	for _, f := range []struct {
		name string
		d    time.Duration
	}{{"TTL", o.TTL}, {"PollInterval", o.PollInterval}, {"Backoff", o.Backoff}} {
		if f.d < 0 || f.d > leasehold.MaxTTL {
			return nil, fmt.Errorf("election: Options.%s %s is outside [0, %s]", f.name, f.d, leasehold.MaxTTL)
		}
	}
	if o.TTL == 0 {
		o.TTL = c.Options().TTL
	}
	if o.PollInterval == 0 {
		o.PollInterval = o.TTL / 3
	}
	if o.Backoff == 0 {
		o.Backoff = o.TTL / 10
	}
	return &Election{c: c, key: key, opts: o}, nil
}

// Key returns the election's key.
func (e *Election) Key() string { return e.key }

// Campaign blocks until this process leads, or ctx ends (then it returns
// ctx's error), or the store fails. A grant that reaches the client after
// the holder's deadline (a loaded machine, a short TTL) is released and
// the campaign goes on: it never leads on a grant that may have expired.
func (e *Election) Campaign(ctx context.Context) (*Leadership, error) {
	for {
		l, err := e.c.Acquire(ctx, e.key, leasehold.AcquireOptions{TTL: e.opts.TTL, Wait: leasehold.WaitForever})
		if err == nil {
			return &Leadership{lease: l}, nil
		}
		// The waiting Acquire drops the late grants it sees; one whose
		// deadline passed just after (before the client could start the
		// lease) comes back as a *LostError, its grant released.
		if !errors.Is(err, leasehold.ErrLost) || ctx.Err() != nil {
			return nil, err
		}
	}
}

// Leadership is one term of this process as the leader.
type Leadership struct {
	lease *leasehold.Lease
}

// Epoch returns the term's epoch: the lease's fencing token, higher than
// every earlier leader's.
func (l *Leadership) Epoch() uint64 { return l.lease.Token() }

// Context returns a context that is cancelled when the leadership ends;
// context.Cause says why (leasehold.ErrReleased after Resign, or a
// *leasehold.LostError). It carries the epoch as the fencing token, for the
// fence package.
func (l *Leadership) Context() context.Context { return l.lease.Context() }

// Done is Context().Done().
func (l *Leadership) Done() <-chan struct{} { return l.lease.Done() }

// Err returns nil while this process leads, then why the leadership ended.
func (l *Leadership) Err() error { return l.lease.Err() }

// Lease returns the lease that holds the leadership.
func (l *Leadership) Lease() *leasehold.Lease { return l.lease }

// Resign ends the leadership and frees the key for the next leader. It
// returns the lease's Release result: nil, or the *leasehold.LostError if
// the leadership had already been lost.
func (l *Leadership) Resign(ctx context.Context) error { return l.lease.Release(ctx) }

// RunIfLeader runs fn only while this process leads: it returns
// ErrNotLeader (wrapping why the leadership ended) without calling fn when
// it has ended, and otherwise calls fn with a context that is cancelled when
// either ctx or the leadership ends.
func (l *Leadership) RunIfLeader(ctx context.Context, fn func(ctx context.Context) error) error {
	if err := l.Err(); err != nil {
		return fmt.Errorf("%w: %w", ErrNotLeader, err)
	}
	rctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	stop := context.AfterFunc(l.Context(), func() { cancel(l.Err()) })
	defer stop()
	return fn(rctx)
}
