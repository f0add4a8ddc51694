package semaphore

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/leasehold-go/leasehold"
)

// errWaitOver is the cause of a waiting Acquire's context when its Wait ran
// out (as opposed to the caller's context ending).
var errWaitOver = errors.New("semaphore: wait ran out")

// Acquire takes a free slot of the semaphore on key, trying the slots in a
// random order so that contenders spread over them. opts.TTL is each
// slot's lease TTL (0: the client's). With opts.Wait 0 it tries every slot
// once and returns a *FullError (matching leasehold.ErrHeld) when all are
// held; otherwise it waits up to opts.Wait (leasehold.WaitForever: until
// ctx ends) for a slot, woken by the store's notifications on every slot
// where it has them (leasehold.Notifier) and backing off with jitter
// otherwise, then tries once more. It returns a *SizeError when it finds
// its N slots held and slot N held too (a caller with more slots).
func (s *Semaphore) Acquire(ctx context.Context, key string, opts leasehold.AcquireOptions) (*Permit, error) {
	keys, err := slotKeys(key, s.n)
	if err != nil {
		return nil, err
	}
	if opts.Wait < 0 {
		return nil, fmt.Errorf("%w: wait %s is negative", leasehold.ErrInvalidWait, opts.Wait)
	}
	try := leasehold.AcquireOptions{TTL: opts.TTL}
	if opts.Wait == 0 {
		p, _, err := s.tryAll(ctx, key, keys, try)
		return p, err
	}
	return s.wait(ctx, key, keys, try, opts.Wait)
}

// tryAll tries each slot once, in a random order, and returns the first
// permit granted. When none is, it returns the FullError (also as err), or
// the last store failure met, or the first other error at once.
func (s *Semaphore) tryAll(ctx context.Context, key string, keys []string, try leasehold.AcquireOptions) (*Permit, *FullError, error) {
	full := &FullError{Key: key, Slots: s.n, Held: make([]*leasehold.HeldError, s.n)}
	var failed error // the last store failure
	for _, i := range rand.Perm(len(keys)) {
		l, err := s.c.Acquire(ctx, keys[i], try)
		if err == nil {
			return &Permit{Lease: l, sem: key, slot: i, n: s.n}, nil, nil
		}
		var he *leasehold.HeldError
		switch {
		case errors.As(err, &he):
			full.Held[i] = he
		case failure(err) && ctx.Err() == nil:
			failed = err
		default:
			return nil, nil, err
		}
	}
	if failed != nil {
		return nil, full, failed
	}
	if err := s.checkSize(ctx, key); err != nil {
		return nil, full, err
	}
	return nil, full, full
}

// checkSize reads slot N of key: held means a caller with more slots is
// using the key, and is refused with a *SizeError. The check is a
// detection, not a bound (see the package doc): a failure to read is not
// reported.
func (s *Semaphore) checkSize(ctx context.Context, key string) error {
	h, err := s.c.Store().Holder(ctx, SlotKey(key, s.n))
	if err != nil {
		return nil
	}
	if h.Key == "" {
		h.Key = SlotKey(key, s.n)
	}
	return &SizeError{Key: key, Slots: s.n, Holder: h}
}

// wait tries every slot until one is granted or the wait runs out, between
// rounds pausing for a backoff delay or until a slot's key is announced
// free.
func (s *Semaphore) wait(ctx context.Context, key string, keys []string, try leasehold.AcquireOptions, wait time.Duration) (*Permit, error) {
	wctx := ctx
	if wait != leasehold.WaitForever {
		var stop context.CancelFunc
		wctx, stop = context.WithTimeoutCause(ctx, wait, errWaitOver)
		defer stop()
	}
	wake, unsubscribe, err := s.subscribe(wctx, keys)
	if err != nil {
		return nil, err
	}
	defer unsubscribe()
	ttl := try.TTL
	if ttl == 0 {
		ttl = s.c.Options().TTL
	}
	for attempt := 1; ; attempt++ {
		p, full, err := s.tryAll(wctx, key, keys, try)
		if err == nil {
			return p, nil
		}
		if !retryable(err) {
			if wctx.Err() != nil && ctx.Err() == nil && context.Cause(wctx) == errWaitOver {
				return s.lastTry(ctx, key, keys, try, err)
			}
			return p, err
		}
		if !s.pause(wctx, s.delay(attempt, ttl, full), wake) {
			if ctx.Err() == nil && context.Cause(wctx) == errWaitOver {
				return s.lastTry(ctx, key, keys, try, err)
			}
			return nil, ctx.Err()
		}
	}
}

// lastTry is the one try after the wait ran out (unless the interrupted
// attempt had an answer of its own: then that is the result).
func (s *Semaphore) lastTry(ctx context.Context, key string, keys []string, try leasehold.AcquireOptions, last error) (*Permit, error) {
	if last != nil && !errors.Is(last, context.Canceled) && !errors.Is(last, context.DeadlineExceeded) && !retryable(last) {
		return nil, last
	}
	p, _, err := s.tryAll(ctx, key, keys, try)
	return p, err
}

// retryable reports an error a waiting Acquire tries again after: all
// slots held, or a failure of the last slot attempt.
func retryable(err error) bool {
	var fe *FullError
	if errors.As(err, &fe) {
		return true
	}
	return failure(err)
}

// failure reports an error of one slot's attempt that another attempt may
// not meet: a store failure, or a grant lost before it was handed over (it
// arrived after the holder's deadline on a slow store or machine).
func failure(err error) bool {
	return (errors.Is(err, leasehold.ErrStore) || errors.Is(err, leasehold.ErrLost)) && !errors.Is(err, leasehold.ErrClosed)
}

// delay is the pause before the next round: the client's backoff, capped
// at a third of the TTL, and no longer than the soonest a holder's lease
// ends by the store's clock (plus a little jitter).
func (s *Semaphore) delay(attempt int, ttl time.Duration, full *FullError) time.Duration {
	d := min(s.c.Options().Backoff.Delay(attempt), max(ttl/3, time.Millisecond))
	if full != nil {
		for _, h := range full.Held {
			if h != nil && h.Remaining > 0 && h.Remaining < d {
				d = h.Remaining + time.Duration(rand.Int64N(int64(time.Millisecond))+1)
			}
		}
	}
	return d
}

// pause waits d, or until wake fires; false when ctx ended first.
func (s *Semaphore) pause(ctx context.Context, d time.Duration, wake <-chan struct{}) bool {
	t := s.c.Options().Clock.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-wake:
		return true
	case <-t.C():
		return true
	}
}

// subscribe subscribes to every slot's key on a store that notifies
// (leasehold.Notifier), merging the notifications into one coalesced
// channel. On other stores the channel never fires and the wait polls.
func (s *Semaphore) subscribe(ctx context.Context, keys []string) (<-chan struct{}, func(), error) {
	wake := make(chan struct{}, 1)
	n, ok := s.c.Store().(leasehold.Notifier)
	if !ok {
		return wake, func() {}, nil
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	var ends []func()
	end := func() {
		close(done)
		for _, f := range ends {
			f()
		}
		wg.Wait()
	}
	for _, k := range keys {
		ch, unsubscribe, err := n.Subscribe(ctx, k)
		if err != nil {
			end()
			return nil, nil, err
		}
		ends = append(ends, unsubscribe)
		wg.Go(func() { forward(ch, wake, done) })
	}
	return wake, end, nil
}

// forward passes each value from ch on to wake, coalesced, until done.
func forward(ch <-chan struct{}, wake chan<- struct{}, done <-chan struct{}) {
	for {
		select {
		case <-done:
			return
		case _, ok := <-ch:
			if !ok {
				return
			}
			select {
			case wake <- struct{}{}:
			default:
			}
		}
	}
}
